package dev.leasehold.cluster;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
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
    private final RaftPeerId selfId;
    private final Supplier<RaftServer> server;
    private final long timeoutMs;

    /**
     * @param server this node's Raft server, once started
     * @param electionTimeoutMaxMs a batch not committed within three of these (at least 5 s) fails
     */
    LocalProposals(RaftPeerId selfId, Supplier<RaftServer> server, long electionTimeoutMaxMs) {
        this.selfId = selfId;
        this.server = server;
        this.timeoutMs = Math.max(5_000, electionTimeoutMaxMs * 3);
    }

    /** Submits {@code batch}; the future completes once it is committed, or fails. */
    CompletableFuture<?> propose(byte[] batch) {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(proposerId).setServerId(selfId)
                .setGroupId(RaftConfig.GROUP_ID).setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(batch)))
                .setType(RaftClientRequest.writeRequestType()).build();
        CompletableFuture<RaftClientReply> reply;
        try {
            reply = server.get().submitClientRequestAsync(request);
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
