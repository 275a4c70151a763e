package dev.leasehold.cluster;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.registry.ReplicatedTable.Check;
import dev.leasehold.registry.ReplicatedTable.Command;
import dev.leasehold.registry.ReplicatedTable.Expire;
import dev.leasehold.registry.ReplicatedTable.Extend;
import dev.leasehold.registry.ReplicatedTable.Grant;
import dev.leasehold.registry.ReplicatedTable.Release;

/**
 * The binary form of a batch of commands, one Raft log entry: a version byte, then per command
 * an op byte ({@code G R E X C}), the token (8 bytes), the lease (1 byte, 0 where unused), the
 * key length (2 bytes) and the key. An Expire's lease byte is its lock-delay in seconds (PROTOCOL.md
 * section 12; 0 before lock-delay existed). Durations only, never clock values (section 10).
 */
final class CommandCodec {

    static final byte VERSION = 1;

    private CommandCodec() {
    }

    static byte[] encode(List<Command> batch) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 + batch.size() * 40);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeInt(batch.size());
            for (Command c : batch) {
                long token;
                int lease = 0;
                byte op;
                if (c instanceof Grant g) {
                    op = 'G';
                    token = g.token();
                    lease = g.leaseSeconds();
                } else if (c instanceof Release r) {
                    op = 'R';
                    token = r.token();
                } else if (c instanceof Extend e) {
                    op = 'E';
                    token = e.token();
                    lease = e.leaseSeconds();
                } else if (c instanceof Check k) {
                    op = 'C';
                    token = k.token();
                } else {
                    op = 'X';
                    token = ((Expire) c).token();
                    lease = ((Expire) c).delaySeconds(); // 0 in entries of earlier versions
                }
                out.writeByte(op);
                out.writeLong(token);
                out.writeByte(lease);
                out.writeShort(c.key().length);
                out.write(c.key());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: cannot happen
        }
        return bytes.toByteArray();
    }

    static List<Command> decode(byte[] data) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown log entry format " + version);
            }
            int n = in.readInt();
            List<Command> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int op = in.readUnsignedByte();
                long token = in.readLong();
                int lease = in.readUnsignedByte();
                byte[] key = new byte[in.readUnsignedShort()];
                in.readFully(key);
                out.add(switch (op) {
                    case 'G' -> new Grant(key, token, lease);
                    case 'R' -> new Release(key, token);
                    case 'E' -> new Extend(key, token, lease);
                    case 'X' -> new Expire(key, token, lease);
                    case 'C' -> new Check(key, token);
                    default -> throw new IllegalArgumentException("unknown command " + op);
                });
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated log entry", e);
        }
    }
}
