/**
 * What one paid call (`POST /signings/quote` paid with a stock x402 payment on the local rail, its 402 leg included,
 * calls one at a time, each call's events relayed and consumed before the next) may cost in round trips to the store
 * and in bus messages: the ceilings test/paid-call.counts.test.ts holds the service to. docs/performance.md ("Round
 * trips and messages per paid call") states the same numbers, and test/docs.test.ts checks that it does.
 */
export const PAID_CALL_BUDGET = {
  embedded: {
    /** PGlite statements of the call's steps, BEGIN and COMMIT included (none is a transaction today). */
    stepStatements: 6,
    /**
     * The relay's statements (its reads that mark the batch before, its marks): a read after the pillar's commit and
     * one after commerce's, a mark, and now and then one more when a commit comes while a flush runs.
     */
    relayStatements: 5,
    /** In-process bus messages: each request and its reply, each event published, each delivery to a consumer. */
    busMessages: 9,
  },
  distributed: {
    /** Postgres round trips of each process's steps (a simple query, or a Sync after Executes). */
    stepRoundTrips: { gateway: 0, commerce: 5, 'services-pillar': 1, workflows: 0, data: 0 },
    /**
     * The relays' round trips (claims and marks), whichever process's relay makes them, summed over the fleet: a claim
     * and a mark for the pillar's events and for commerce's, and on a loaded machine a claim or two more that find
     * their rows taken (a commit that came while a flush ran).
     */
    relayRoundTrips: 6,
    /** NATS messages, summed over the processes: each counted where it is sent and where it is received. */
    natsMessages: 18,
    /** Processes a paid call must not reach: no round trip, no NATS message (a relay's included). */
    untouched: ['workflows', 'data'],
  },
} as const;
