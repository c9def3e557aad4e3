-- A write that must happen, checked inside the statement that makes it (platform store/together.ts `required`):
-- where the part did not write, the statement fails (SQLSTATE VC001) and writes nothing, as a transaction rolled
-- back by its caller would, without the BEGIN and COMMIT.
create function vcs_required(wrote boolean, part text) returns boolean language plpgsql as $$
begin
  if not wrote then
    raise exception 'a write that must happen did not: %', part using errcode = 'VC001';
  end if;
  return true;
end $$;
