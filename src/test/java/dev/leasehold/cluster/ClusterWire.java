package dev.leasehold.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;

/**
 * The raw protocol as the cluster tests speak it: frames through the protocol's own
 * {@link FrameWriter}, answers through its decoder ({@link RawClient}), flattened into one
 * {@link Answer} record so a load loop can switch on the answer byte and read a hint from
 * {@code X 8}'s message.
 */
final class ClusterWire {

    private ClusterWire() {
    }

    static byte[] acquire(int wait, int lease, long owner, String key) {
        return FrameWriter.encode(new Request.Acquire(wait, lease, owner, key.getBytes(UTF_8)));
    }

    static byte[] release(long token, String key) {
        return FrameWriter.encode(new Request.Release(token, key.getBytes(UTF_8)));
    }

    /** A shared acquire ({@code S}, PROTOCOL.md section 13). */
    static byte[] sharedAcquire(int wait, int lease, long owner, int limit, String key) {
        return FrameWriter.encode(new Request.SharedAcquire(wait, lease, owner, limit, key.getBytes(UTF_8)));
    }

    static byte[] extend(int lease, long token, String key) {
        return FrameWriter.encode(new Request.Extend(lease, token, key.getBytes(UTF_8)));
    }

    static byte[] check(long token, String key) {
        return FrameWriter.encode(new Request.Check(token, key.getBytes(UTF_8)));
    }

    /** The protocol address {@code 127.0.0.1:port} of each node. */
    static List<InetSocketAddress> loopback(int[] clientPorts) {
        List<InetSocketAddress> nodes = new ArrayList<>();
        for (int port : clientPorts) {
            nodes.add(new InetSocketAddress("127.0.0.1", port));
        }
        return nodes;
    }

    /**
     * A decoded answer: its byte; the owner (A, T, B), token (R, E, N, C) or nonce (P) as
     * {@code number}; for A also the token and queued_ms; for X the code and message; for L the
     * key's limit as {@code code}.
     */
    record Answer(int op, long number, long token, long queuedMs, int code, String message) {

        static Answer of(dev.leasehold.protocol.Answer a) {
            if (a instanceof dev.leasehold.protocol.Answer.Acquired g) {
                return new Answer('A', g.owner(), g.token(), g.queuedMs(), 0, "");
            } else if (a instanceof dev.leasehold.protocol.Answer.TimedOut t) {
                return plain('T', t.owner());
            } else if (a instanceof dev.leasehold.protocol.Answer.Busy b) {
                return plain('B', b.owner());
            } else if (a instanceof dev.leasehold.protocol.Answer.Released r) {
                return plain('R', r.token());
            } else if (a instanceof dev.leasehold.protocol.Answer.Extended e) {
                return plain('E', e.token());
            } else if (a instanceof dev.leasehold.protocol.Answer.NotHeld n) {
                return plain('N', n.token());
            } else if (a instanceof dev.leasehold.protocol.Answer.Current c) {
                return plain('C', c.token());
            } else if (a instanceof dev.leasehold.protocol.Answer.Pong p) {
                return plain('P', p.nonce());
            } else if (a instanceof dev.leasehold.protocol.Answer.LimitMismatch l) {
                return new Answer('L', l.owner(), 0, 0, l.limit(), ""); // the key's limit as the code
            }
            dev.leasehold.protocol.Answer.Error x = (dev.leasehold.protocol.Answer.Error) a; // the last of the sealed kinds
            return new Answer('X', 0, 0, 0, x.code(), x.message());
        }

        private static Answer plain(int op, long number) {
            return new Answer(op, number, 0, 0, 0, "");
        }

        /** As a failure message shows it: "A token 7", "X 8 leader=127.0.0.1:4001", "T". */
        @Override
        public String toString() {
            return switch (op) {
                case 'A' -> "A token " + token;
                case 'X' -> "X " + code + (message.isEmpty() ? "" : " " + message);
                case 'L' -> "L limit " + code;
                default -> String.valueOf((char) op);
            };
        }
    }

    /** One session; the connect gives up after 500 ms, as a node behind a cut never answers. */
    static final class Conn implements AutoCloseable {
        private final RawClient raw;

        Conn(int port) throws IOException {
            this(new InetSocketAddress("127.0.0.1", port));
        }

        Conn(InetSocketAddress node) throws IOException {
            Socket socket = new Socket();
            try {
                socket.connect(node, 500);
                socket.setTcpNoDelay(true);
                raw = new RawClient(socket);
            } catch (IOException e) {
                socket.close();
                throw e;
            }
        }

        void send(byte[] frame) throws IOException {
            raw.sendBytes(frame);
        }

        /**
         * Sends an Acquire with wait 0 and returns the token of its {@code A}; any other answer
         * (within 5 s) fails the test, naming it.
         */
        long grant(int lease, long owner, String key) throws IOException {
            send(acquire(0, lease, owner, key));
            Answer a = read(5000);
            if (a.op() != 'A') {
                throw new AssertionError("expected A for " + key + ", got " + (char) a.op() + " " + a);
            }
            return a.token();
        }

        /** The next answer within {@code timeoutMs}; a timeout or a closed session throws. */
        Answer read(int timeoutMs) throws IOException {
            return Answer.of(raw.next(timeoutMs));
        }

        @Override
        public void close() {
            try {
                raw.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
