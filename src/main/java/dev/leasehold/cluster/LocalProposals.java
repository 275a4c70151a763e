package dev.leasehold.cluster;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * Proposes one batch to this node's own Raft server, in-process: no RaftClient, so no gRPC round
 * trip to ourselves, no serialisation and no sliding-window threads per batch (a third to a half
 * of the leader's CPU per commit went there). Batches are proposed from the proposer thread only;
 * Ratis appends a write in the calling thread, so log order is proposal order (roster entries,
 * from the roles thread, may land between two batches: order does not matter to them). A batch
 * that cannot commit fails (not leader, step-down, or no commit within a few election timeouts)
 * and the node stops serving until it has applied its whole log again.
 */
final class LocalProposals {

    /** The proposer's identity towards Ratis's retry cache: (client id, call id) names a proposal. */
    private final ClientId proposerId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    /** The node whose Raft server the batches go to (read per batch: it exists only once started). */
    private final RaftHost host;
    private final long timeoutMs;

    /**
     * A batch not committed within three of the host's {@code election-timeout-max} (at least 5 s)
     * fails.
     */
    LocalProposals(RaftHost host) {
        this.host = host;
        this.timeoutMs = Math.max(5_000, host.settings().electionTimeoutMax().toMillis() * 3);
    }

    /** Submits {@code batch}; the future completes once it is committed, or fails. */
    CompletableFuture<?> propose(byte[] batch) {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(proposerId).setServerId(host.selfId())
                .setGroupId(RaftConfig.GROUP_ID).setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(batch)))
                .setType(RaftClientRequest.writeRequestType()).build();
        CompletableFuture<RaftClientReply> reply;
        try {
            reply = host.server().submitClientRequestAsync(request);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        return reply.orTimeout(timeoutMs, TimeUnit.MILLISECONDS).thenApply(r -> {
            if (!r.isSuccess()) {
                throw new IllegalStateException("not committed: " + r.getException());
            }
            return r;
        });
    }

    /** A call id for another in-process request (the group add that formats empty storage). */
    long nextCallId() {
        return callIds.incrementAndGet();
    }
}
