package dev.leasehold.cluster;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.HeldGrant;

/**
 * The Raft state machine: applies committed batches to the {@link ReplicatedTable} in log order
 * (on every node), writes and loads snapshots of it, and passes leadership events to the
 * {@link Listener} (the {@link ClusterNode}).
 *
 * <p>Only {@link #applyTransaction} changes the table; snapshots and reads synchronise on this
 * object, so a snapshot never sees half a batch.
 */
final class LockStateMachine extends BaseStateMachine {

    private static final Logger LOG = LoggerFactory.getLogger(LockStateMachine.class);

    /** Leadership and failure events, called on Ratis threads: must not block for long. */
    interface Listener {
        /** This node's first entry of its term is applied: every committed entry is in the table. */
        void leaderReady();

        /** The leader is now {@code leader} (null while unknown). */
        void leaderChanged(RaftPeerId leader);

        /** This node is no longer leader. */
        void notLeader();

        /** The Raft log cannot be written: the node must stop rather than serve on. */
        void logFailed(Throwable cause);

        /**
         * A committed entry (or a snapshot) is in a format this build does not know: a newer build
         * wrote it. The node must stop rather than skip or misapply it.
         */
        void unknownFormat(String message);
    }

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final Listener listener;
    private ReplicatedTable table = new ReplicatedTable();
    /** Which member ids have stored the log (see {@link Roster}); guarded like the table. */
    private Roster roster = new Roster();
    /**
     * The latest snapshot, known without a look at the disk: set when one is loaded (start, or
     * after the leader installed one: {@link #reinitialize}) and when one is taken. Ratis asks for
     * it on every log appender loop and every appendEntries, and {@link SimpleStateMachineStorage}
     * lists the snapshot directory on each call until a first snapshot exists (5-7 % of every
     * node's CPU under load: bench/NOTES.md, "Where the cluster's CPU goes").
     */
    private volatile SingleFileSnapshotInfo latestSnapshot;

    LockStateMachine(Listener listener) {
        this.listener = listener;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        load(storage.loadLatestSnapshot());
    }

    @Override
    public void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot());
    }

    private synchronized void load(SingleFileSnapshotInfo snapshot) throws IOException {
        latestSnapshot = snapshot;
        if (snapshot == null) {
            return;
        }
        File f = snapshot.getFile().getPath().toFile();
        MD5FileUtil.verifySavedMD5(f, snapshot.getFile().getFileDigest());
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(f.toPath())))) {
            table = ReplicatedTable.readFrom(in);
            roster = Roster.readFrom(in);
        } catch (IOException e) {
            String message = "Cannot read snapshot " + f + ": " + e.getMessage() + ". If a newer build wrote it, "
                    + "upgrade this node to that build (docs/cluster.md \"Upgrading\"); this node does not start "
                    + "rather than run on part of the state.";
            listener.unknownFormat(message);
            throw new IOException(message, e);
        }
        setLastAppliedTermIndex(snapshot.getTermIndex());
        LOG.info("Loaded snapshot {}: {} held keys, token counter {}", snapshot.getTermIndex(), table.size(),
                table.counter());
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        return latestSnapshot;
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        byte[] data = entry.getStateMachineLogEntry().getLogData().toByteArray();
        int format = data.length == 0 ? -1 : data[0] & 0xFF;
        if (format != Roster.ENTRY && !CommandCodec.readable(format)) {
            String message = "Raft log entry " + entry.getIndex() + " (term " + entry.getTerm() + ") has format "
                    + format + ", which this build does not know (it reads " + CommandCodec.VERSION
                    + " = lock commands, " + Roster.ENTRY + " = member roster, " + CommandCodec.SHARED_VERSION
                    + " = lock commands with shared grants and " + CommandCodec.VALUE_VERSION
                    + " = lock commands with values). A newer build wrote it: upgrade this "
                    + "node to that build (docs/cluster.md \"Upgrading\": followers first, one at a time, the leader "
                    + "last). Stopping rather than skipping or misapplying a committed entry.";
            listener.unknownFormat(message);
            return CompletableFuture.failedFuture(new IllegalStateException(message));
        }
        if (format == Roster.ENTRY) {
            synchronized (this) {
                roster.apply(data);
                updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            }
            LOG.info("Roster (members that have stored the log): {}{}", rosterIds(),
                    rosterStarted() ? "" : " (not started)");
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
        List<Command> batch = CommandCodec.decode(data);
        long rejected;
        synchronized (this) {
            long before = table.rejected();
            for (Command c : batch) {
                table.apply(c);
            }
            rejected = table.rejected() - before;
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
        }
        if (rejected > 0) {
            LOG.error("Log entry {} had {} grants on keys that were still held: the leader's view was wrong",
                    entry.getIndex(), rejected);
        }
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    @Override
    public long takeSnapshot() throws IOException {
        ReplicatedTable copy;
        TermIndex last;
        synchronized (this) {
            last = getLastAppliedTermIndex();
            if (last == null || last.getIndex() < 0) {
                return -1;
            }
            File f = storage.getSnapshotFile(last.getTerm(), last.getIndex());
            File tmp = new File(f.getPath() + ".tmp");
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp.toPath())))) {
                table.writeTo(out);
                roster.writeTo(out);
            }
            Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            var md5 = MD5FileUtil.computeAndSaveMd5ForFile(f);
            SingleFileSnapshotInfo taken = new SingleFileSnapshotInfo(new FileInfo(f.toPath(), md5), last);
            storage.updateLatestSnapshot(taken);
            latestSnapshot = taken;
            copy = table;
        }
        LOG.info("Snapshot at {}: {} held keys", last, copy.size());
        return last.getIndex();
    }

    /** Every held key and the token counter, as one consistent read. */
    synchronized Snapshot read() {
        return new Snapshot(table.held(), table.counter(), getLastAppliedTermIndex());
    }

    /** A consistent read of the table. */
    record Snapshot(List<HeldGrant> held, long counter, TermIndex applied) {
    }

    /** The replicated token counter: the highest token of any grant applied. */
    synchronized long counter() {
        return table.counter();
    }

    synchronized int heldKeys() {
        return table.size();
    }

    /** Answers a {@link Roster#query}: the only read-only request (a linearizable read, see ClusterNode). */
    @Override
    public CompletableFuture<Message> query(Message request) {
        byte[] answer;
        synchronized (this) {
            answer = roster.answer(request.getContent().toByteArray());
        }
        return CompletableFuture.completedFuture(Message.valueOf(UnsafeByteOperations.unsafeWrap(answer)));
    }

    synchronized boolean rosterStarted() {
        return roster.started();
    }

    synchronized boolean rosterHas(String memberId) {
        return roster.contains(memberId);
    }

    synchronized java.util.Set<String> rosterIds() {
        return roster.ids();
    }

    synchronized java.util.Set<String> removedIds() {
        return roster.removedIds();
    }

    synchronized boolean rosterRemoved(String memberId) {
        return roster.removed(memberId);
    }

    /** Members added online: id → addresses (docs/cluster.md "Changing members"). */
    synchronized java.util.Map<String, Roster.Addresses> directory() {
        return roster.directory();
    }

    // ------------------------------------------------------------------ events

    @Override
    public void notifyLeaderReady() {
        listener.leaderReady();
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
        listener.leaderChanged(newLeader);
    }

    @Override
    public void notifyNotLeader(Collection<TransactionContext> pending) {
        listener.notLeader();
    }

    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto entry) {
        listener.logFailed(cause);
    }
}
