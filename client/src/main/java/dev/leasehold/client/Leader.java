package dev.leasehold.client;

/**
 * A leader as observers see it ({@link Election#leader()}, {@link LeaderListener#onNewLeader}):
 * its term, the fencing token of its grant, and the identity it campaigned with (or the last value
 * it proclaimed). For routing and display: only a {@link Leadership} entitles, and its term fences.
 *
 * @param term the leader's fencing token
 * @param identity the grant's value as UTF-8 text
 */
public record Leader(long term, String identity) {
}
