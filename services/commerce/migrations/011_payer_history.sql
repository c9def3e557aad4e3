-- A wallet's sign-in-with-x read (`intents.reread`: the latest answer this wallet paid for this capability and input)
-- looks among that wallet's payments, not among every payment ever made: its cost follows the wallet's own history.
create index payments_payer on payments(lower(payer));
