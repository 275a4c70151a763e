package dev.leasehold.cluster;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The replicated record of which member ids have ever stored the cluster's log: what tells a
 * node with empty storage apart from a node that lost its disk (docs/cluster.md "When a disk is
 * lost"; {@link Formation}).
 *
 * <h2>Why the log holds it</h2>
 * An empty directory looks the same on a node that never started and on a node whose volume was
 * replaced. Probing the peers' Raft state cannot tell either: a slow-starting founding member
 * finds its peers already formed and with data, exactly like a wiped one. Only a durable,
 * agreed record can: the serving leader records every member that has stored the log
 * ({@link #storedEntry}: itself, and each follower once it reports a commit index), and the
 * record is a Raft entry like any other. A node with empty
 * storage asks the current leader with a linearizable read ({@link #query}); a leader has every
 * committed entry (Raft's leader completeness) and the read waits until they are applied, so
 * "never stored" is the group's answer, not one peer's. etcd decides the same way: a member whose
 * attributes were published through its log is "already bootstrapped" and may not bootstrap again.
 *
 * <h2>What it does not cover</h2>
 * A member stores entries before its record commits (within a second or two of its first
 * commit). A disk lost inside that window is not detected, as in etcd.
 *
 * <h2>Clusters older than the roster</h2>
 * The first leader that serves on this code starts the roster ({@link #startEntry}): empty when
 * the table has never issued a token (a new cluster: nobody has stored grants yet), or with every
 * configured member when it has (an upgraded cluster: any of them may have). Until it is started
 * the answer is {@link Answer#UNKNOWN} and an empty node waits.
 *
 * <p>Not thread-safe: the state machine guards it with its own lock.
 */
final class Roster {

    /** First byte of a roster log entry; command batches start with {@link CommandCodec#VERSION}. */
    static final byte ENTRY = 2;
    private static final byte START = 'S';
    private static final byte STORED = 'M';
    private static final byte ADDRESSES = 'A';
    private static final byte REMOVED = 'D';
    /** First byte of a roster query (a read-only message). */
    private static final byte QUERY = 'Q';
    /** First byte of "was this id removed?" (a read-only message; one byte back, 1 = removed). */
    private static final byte REMOVED_QUERY = 'R';
    /** Marks the roster's part of a snapshot, after the table's. */
    private static final int SNAPSHOT_MAGIC = 0x524f5354; // "ROST"
    /** Marks the directory's part of a snapshot, after the stored ids. */
    private static final int DIRECTORY_MAGIC = 0x44495253; // "DIRS"

    /** What the group says about one member id. */
    enum Answer {
        /** The id has stored the log: a node under it with empty storage lost its disk. */
        STORED,
        /** The id never stored the log: a node under it may format and join. */
        NEVER_STORED,
        /** No leader has started the roster yet: ask again. */
        UNKNOWN
    }

    /**
     * A member added online: where it runs (its Raft address is in Ratis's configuration too; the
     * client address, named in {@code X 8} hints, only here).
     */
    record Addresses(String raftAddress, String clientAddress, String identity) {

        /** Without an explicit identity: named by its Raft address's host. */
        Addresses(String raftAddress, String clientAddress) {
            this(raftAddress, clientAddress, "");
        }
    }

    private boolean started;
    private final Set<String> stored = new TreeSet<>();
    /** Members added online (docs/cluster.md "Changing members"): id → addresses. */
    private final Map<String, Addresses> directory = new TreeMap<>();
    /** Ids removed from the configuration: never members again, under any incarnation. */
    private final Set<String> removed = new TreeSet<>();

    /** The entry a serving leader proposes when the roster is not started yet. */
    static byte[] startEntry(Collection<String> initial) {
        return entry(START, String.join(",", new TreeSet<>(initial)));
    }

    /** The entry a member proposes once it has stored the log. */
    static byte[] storedEntry(String memberId) {
        return entry(STORED, memberId);
    }

    /** The entry the admin proposes before it adds {@code memberId} (addresses for hints and TLS). */
    static byte[] addressesEntry(String memberId, String raftAddress, String clientAddress, String identity) {
        return entry(ADDRESSES, memberId + "|" + raftAddress + "|" + clientAddress + "|"
                + (identity == null ? "" : identity));
    }

    /** The entry the admin proposes once {@code memberId} is out of the configuration. */
    static byte[] removedEntry(String memberId) {
        return entry(REMOVED, memberId);
    }

    /** A read-only message asking about {@code memberId}. */
    static byte[] query(String memberId) {
        byte[] id = memberId.getBytes(StandardCharsets.UTF_8);
        byte[] q = new byte[1 + id.length];
        q[0] = QUERY;
        System.arraycopy(id, 0, q, 1, id.length);
        return q;
    }

    /**
     * A read-only message asking whether {@code memberId} was removed: how a node whose local
     * configuration leaves it out learns that its removal committed ({@link Removal}).
     */
    static byte[] removedQuery(String memberId) {
        byte[] q = query(memberId);
        q[0] = REMOVED_QUERY;
        return q;
    }

    /** Reads the one-byte answer to {@link #removedQuery}: true when the id was removed. */
    static boolean parseRemoved(byte[] reply) {
        if (reply.length != 1 || reply[0] > 1) {
            throw new IllegalArgumentException("removal answer of " + reply.length + " bytes");
        }
        return reply[0] == 1;
    }

    /** Reads the one-byte answer to {@link #query}. */
    static Answer parseAnswer(byte[] reply) {
        if (reply.length != 1) {
            throw new IllegalArgumentException("roster answer of " + reply.length + " bytes");
        }
        return Answer.values()[reply[0]];
    }

    private static byte[] entry(byte kind, String text) {
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        byte[] e = new byte[2 + t.length];
        e[0] = ENTRY;
        e[1] = kind;
        System.arraycopy(t, 0, e, 2, t.length);
        return e;
    }

    /** Applies a roster log entry (first byte {@link #ENTRY}). */
    void apply(byte[] entry) {
        if (entry.length < 2 || entry[0] != ENTRY) {
            throw new IllegalArgumentException("not a roster entry");
        }
        String text = new String(entry, 2, entry.length - 2, StandardCharsets.UTF_8);
        switch (entry[1]) {
            case START -> {
                started = true;
                for (String id : text.split(",")) {
                    if (!id.isEmpty()) {
                        stored.add(id);
                    }
                }
            }
            case STORED -> stored.add(text);
            case ADDRESSES -> {
                String[] f = text.split("\\|", -1);
                if (f.length != 4) {
                    throw new IllegalArgumentException("roster addresses entry " + text);
                }
                directory.put(f[0], new Addresses(f[1], f[2], f[3]));
            }
            case REMOVED -> removed.add(text);
            default -> throw new IllegalArgumentException("unknown roster entry kind " + entry[1]);
        }
    }

    /** The answer to a {@link #query} or {@link #removedQuery} message, one byte. */
    byte[] answer(byte[] query) {
        if (query.length < 1 || (query[0] != QUERY && query[0] != REMOVED_QUERY)) {
            throw new IllegalArgumentException("not a roster query");
        }
        String id = new String(query, 1, query.length - 1, StandardCharsets.UTF_8);
        if (query[0] == REMOVED_QUERY) {
            return new byte[] {(byte) (removed.contains(id) ? 1 : 0)};
        }
        return new byte[] {(byte) answer(id).ordinal()};
    }

    Answer answer(String memberId) {
        if (stored.contains(memberId) || removed.contains(memberId)) {
            return Answer.STORED;
        }
        return started ? Answer.NEVER_STORED : Answer.UNKNOWN;
    }

    boolean started() {
        return started;
    }

    boolean contains(String memberId) {
        return stored.contains(memberId);
    }

    /** Whether {@code memberId} was removed from the cluster (it may never come back under that id). */
    boolean removed(String memberId) {
        return removed.contains(memberId);
    }

    /** The ids removed so far. */
    Set<String> removedIds() {
        return Collections.unmodifiableSet(new TreeSet<>(removed));
    }

    /** Members added online, id → addresses. */
    Map<String, Addresses> directory() {
        return Collections.unmodifiableMap(new TreeMap<>(directory));
    }

    /** The ids recorded so far, in order. */
    Set<String> ids() {
        return Collections.unmodifiableSet(new TreeSet<>(stored));
    }

    /** Appends the roster to a snapshot, after the table. */
    void writeTo(DataOutput out) throws IOException {
        out.writeInt(SNAPSHOT_MAGIC);
        out.writeBoolean(started);
        out.writeInt(stored.size());
        for (String id : stored) {
            out.writeUTF(id);
        }
        out.writeInt(DIRECTORY_MAGIC);
        out.writeInt(directory.size());
        for (Map.Entry<String, Addresses> e : directory.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue().raftAddress());
            out.writeUTF(e.getValue().clientAddress());
            out.writeUTF(e.getValue().identity());
        }
        out.writeInt(removed.size());
        for (String id : removed) {
            out.writeUTF(id);
        }
    }

    /** Reads the roster part of a snapshot; a snapshot written before the roster has none. */
    static Roster readFrom(DataInput in) throws IOException {
        Roster r = new Roster();
        int magic;
        try {
            magic = in.readInt();
        } catch (EOFException e) {
            return r; // older snapshot: not started, the first serving leader starts it
        }
        if (magic != SNAPSHOT_MAGIC) {
            throw new IOException("unknown data after the table in the snapshot: " + Integer.toHexString(magic));
        }
        r.started = in.readBoolean();
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            r.stored.add(in.readUTF());
        }
        int directoryMagic;
        try {
            directoryMagic = in.readInt();
        } catch (EOFException e) {
            return r; // written before members could be added online
        }
        if (directoryMagic != DIRECTORY_MAGIC) {
            throw new IOException("unknown data after the roster in the snapshot: " + Integer.toHexString(directoryMagic));
        }
        int d = in.readInt();
        for (int i = 0; i < d; i++) {
            r.directory.put(in.readUTF(), new Addresses(in.readUTF(), in.readUTF(), in.readUTF()));
        }
        int m = in.readInt();
        for (int i = 0; i < m; i++) {
            r.removed.add(in.readUTF());
        }
        return r;
    }
}
