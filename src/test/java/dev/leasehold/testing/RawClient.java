package dev.leasehold.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.HexFormat;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Request;

/**
 * A bare protocol session for tests: writes exact bytes or frames, reads decoded answers with a
 * timeout. No retries, no semantics: what the server sends is what the test sees.
 */
public final class RawClient implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final AnswerDecoder decoder = new AnswerDecoder();
    private final ByteBuffer buf = ByteBuffer.allocate(4096).flip();

    public RawClient(int port) throws IOException {
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** Over a socket the test connected itself, e.g. a TLS socket after its handshake. */
    public RawClient(Socket connected) throws IOException {
        socket = connected;
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    public RawClient send(Request... requests) throws IOException {
        for (Request r : requests) {
            out.write(FrameWriter.encode(r));
        }
        out.flush();
        return this;
    }

    public RawClient sendHex(String hex) throws IOException {
        return sendBytes(HexFormat.ofDelimiter(" ").parseHex(hex.trim()));
    }

    public RawClient sendBytes(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** The next answer, waiting up to {@code timeoutMillis}; fails on timeout or EOF. */
    public Answer next(long timeoutMillis) throws IOException {
        Answer a = poll(timeoutMillis);
        if (a == null) {
            throw new SocketTimeoutException("no answer within " + timeoutMillis + " ms");
        }
        return a;
    }

    public Answer next() throws IOException {
        return next(10_000);
    }

    /** The next answer, or null if none came within {@code timeoutMillis}. EOF throws. */
    public Answer poll(long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (true) {
            try {
                Answer a = decoder.next(buf);
                if (a != null) {
                    return a;
                }
            } catch (ProtocolException e) {
                throw new IOException(e);
            }
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return null;
            }
            socket.setSoTimeout((int) Math.max(1, left));
            byte[] chunk = new byte[4096];
            int n;
            try {
                n = in.read(chunk);
            } catch (SocketTimeoutException e) {
                return null;
            }
            if (n < 0) {
                throw new java.io.EOFException("server closed the session");
            }
            buf.compact().put(chunk, 0, n).flip();
        }
    }

    /** True once the server has closed the session (EOF) within {@code timeoutMillis}. */
    public boolean closedByServer(long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (System.nanoTime() < deadline) {
            try {
                if (poll(Math.max(1, (deadline - System.nanoTime()) / 1_000_000)) == null) {
                    return false;
                }
            } catch (java.io.EOFException e) {
                return true;
            } catch (IOException e) {
                return true; // reset
            }
        }
        return false;
    }

    public Socket socket() {
        return socket;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
