package dev.leasehold.cluster;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.cluster.Command.Check;
import dev.leasehold.cluster.Command.Expire;
import dev.leasehold.cluster.Command.Extend;
import dev.leasehold.cluster.Command.Grant;
import dev.leasehold.cluster.Command.Kind;
import dev.leasehold.cluster.Command.Release;
import dev.leasehold.cluster.Command.Value;
import dev.leasehold.protocol.HoldMode;

/**
 * The binary form of a batch of commands, one Raft log entry: a format byte, the command count,
 * then per command an op byte ({@code G S R E X C}), the token (8 bytes), the lease (1 byte, 0
 * where unused), for a grant in a shared mode ({@code S}) only its limit (2 bytes), the key length
 * (2 bytes) and the key. An Expire's lease byte is its lock-delay in seconds (PROTOCOL.md section
 * 12; 0 before lock-delay existed). Durations only, never clock values (section 10).
 *
 * <p>Format {@link #VERSION} (1) has no shared grant; a batch with one is written as
 * {@link #SHARED_VERSION} (3; 2 is the roster's entry), so a node of a build before shared holds
 * stops on it with its unknown-format message (docs/cluster.md "Upgrading") instead of failing on
 * an unknown op, and a batch without one stays readable by such a node during a rolling upgrade.
 *
 * <p>Format {@link #VALUE_VERSION} (4, PROTOCOL.md 17.6) is format 3 plus values: every exclusive
 * grant ({@code G}) and every {@code V} (a set value, {@link Value}) is followed, after its key, by
 * its value (u16 length, then the bytes; length 0: none, or cleared). A batch is written in it only
 * when it holds a {@code V} or a grant with a value, so a cluster that never sees a value writes
 * nothing an earlier build cannot apply.
 */
final class CommandCodec {

    /** Lock commands without shared grants. */
    static final byte VERSION = 1;
    /** Lock commands with at least one shared grant (PROTOCOL.md 13.9). */
    static final byte SHARED_VERSION = 3;
    /** Lock commands with at least one value: a set value or a grant with a value (PROTOCOL.md 17.6). */
    static final byte VALUE_VERSION = 4;
    /**
     * The op byte of a {@link Grant} in a shared mode: an exclusive grant is written {@code G}
     * ({@link Kind#GRANT}), a shared one {@code S} with its limit, as since format 3.
     */
    static final byte SHARED_GRANT_OP = 'S';

    private CommandCodec() {
    }

    /** True if {@code format} is a lock-command entry this build reads. */
    static boolean readable(int format) {
        return format == VERSION || format == SHARED_VERSION || format == VALUE_VERSION;
    }

    /** The format {@code batch} is written in: the oldest that can hold it. */
    static byte formatOf(List<Command> batch) {
        if (batch.stream().anyMatch(CommandCodec::carriesValue)) {
            return VALUE_VERSION;
        }
        return batch.stream().anyMatch(CommandCodec::isSharedGrant) ? SHARED_VERSION : VERSION;
    }

    static byte[] encode(List<Command> batch) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 + batch.size() * 40);
        byte format = formatOf(batch);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(format);
            out.writeInt(batch.size());
            for (Command c : batch) {
                boolean sharedGrant = isSharedGrant(c);
                out.writeByte(sharedGrant ? SHARED_GRANT_OP : c.kind().op());
                out.writeLong(c.token());
                out.writeByte(leaseByte(c));
                if (sharedGrant) {
                    out.writeShort(((Grant) c).mode().limit());
                }
                out.writeShort(c.key().length);
                out.write(c.key());
                if (format == VALUE_VERSION && hasValueField(c.kind(), sharedGrant)) {
                    byte[] v = valueOf(c);
                    out.writeShort(v == null ? 0 : v.length);
                    out.write(v == null ? new byte[0] : v);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: cannot happen
        }
        return bytes.toByteArray();
    }

    private static boolean isSharedGrant(Command c) {
        return c instanceof Grant g && g.mode().isShared();
    }

    /** A set value, or a grant with a value: only format 4 can hold it. */
    private static boolean carriesValue(Command c) {
        return c instanceof Value || c instanceof Grant g && g.value() != null && g.value().length > 0;
    }

    /** In format 4, the rows followed by a value: exclusive grants and set values. */
    private static boolean hasValueField(Kind kind, boolean sharedGrant) {
        return kind == Kind.VALUE || kind == Kind.GRANT && !sharedGrant;
    }

    private static byte[] valueOf(Command c) {
        return c instanceof Value v ? v.value() : ((Grant) c).value();
    }

    /** The lease byte of {@code command}'s row; no default, so a new kind must say what it carries there. */
    private static int leaseByte(Command command) {
        return switch (command.kind()) {
            case GRANT -> ((Grant) command).leaseSeconds();
            case EXTEND -> ((Extend) command).leaseSeconds();
            case EXPIRE -> ((Expire) command).delaySeconds(); // 0 in entries of earlier versions
            case RELEASE, CHECK, VALUE -> 0;
        };
    }

    static List<Command> decode(byte[] data) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
            int version = in.readUnsignedByte();
            if (!readable(version)) {
                throw new IllegalArgumentException("unknown log entry format " + version);
            }
            int n = in.readInt();
            List<Command> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int op = in.readUnsignedByte();
                long token = in.readLong();
                int lease = in.readUnsignedByte();
                boolean sharedGrant = op == SHARED_GRANT_OP && version >= SHARED_VERSION;
                Kind kind = sharedGrant ? Kind.GRANT : Kind.fromByte(op);
                if (kind == null || kind == Kind.VALUE && version < VALUE_VERSION) {
                    throw new IllegalArgumentException("unknown command " + op + " in log entry format " + version);
                }
                HoldMode mode = sharedGrant ? HoldMode.ofLimit(in.readUnsignedShort()) : HoldMode.EXCLUSIVE;
                byte[] key = new byte[in.readUnsignedShort()];
                in.readFully(key);
                byte[] value = null;
                if (version == VALUE_VERSION && hasValueField(kind, sharedGrant)) {
                    value = new byte[in.readUnsignedShort()];
                    in.readFully(value);
                }
                byte[] v = value;
                out.add(switch (kind) {
                    case GRANT -> new Grant(key, token, lease, mode, v == null || v.length == 0 ? null : v);
                    case VALUE -> new Value(key, token, v);
                    case RELEASE -> new Release(key, token);
                    case EXTEND -> new Extend(key, token, lease);
                    case EXPIRE -> new Expire(key, token, lease);
                    case CHECK -> new Check(key, token);
                });
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated log entry", e);
        }
    }
}
