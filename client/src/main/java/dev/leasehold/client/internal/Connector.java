package dev.leasehold.client.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;

/**
 * Sets up one session's connection, on its writer thread: TCP connect, TLS, and the opening Hello
 * (PROTOCOL.md 9.13; the opening Ping instead where the server speaks 1.3 or the client is set to
 * 1.3). The session is up only once that Hello's answer (or Ping's Pong) arrives within the connect
 * timeout, so a peer that accepts TCP but does not speak the protocol never takes a request; an
 * {@code X 1} to the Hello is {@link HelloRefused}, after which the pool opens the next session to
 * that address with the Ping.
 *
 * <p>The connect and handshake bounds are socket timeouts, which only real time can drive
 * ({@link System#nanoTime()}); the engine's ticker times the requests (sendStart, receivedAt),
 * which tests move. The Pong is read here, a byte at a time, so that no byte of what follows it
 * is taken from the session's reader.
 */
final class Connector {

    /**
     * The connection, ready for requests: the session's streams, and the server's answer to the
     * opening Hello ({@code null} when the session opened with a Ping: a 1.3 session).
     */
    record Established(InputStream in, OutputStream out, Answer.Hello hello) {
    }

    /** Why the connection could not be set up; the session closes with this reason. */
    static class Failed extends Exception {
        Failed(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * The server answered the opening Hello with {@code X 1}: a 1.3 server (PROTOCOL.md 9.13). It
     * closes the session, which carried nothing else.
     */
    static final class HelloRefused extends Failed {
        HelloRefused(String reason) {
            super(reason);
        }
    }

    /** Where answers that arrive before the Pong go (an {@code X} frame, say); false once the session closed. */
    interface EarlyAnswers {
        boolean accept(Answer answer);
    }

    private final Config config;
    private final InetSocketAddress address;

    Connector(Config config, InetSocketAddress address) {
        this.config = config;
        this.address = address;
    }

    /**
     * Connects {@code socket} (the session's: closing it from another thread aborts every step),
     * and waits for the Pong to {@code nonce}, all within the connect timeout. With {@code hello}
     * the session opens with a Hello alone in place of the Ping (PROTOCOL.md 9.13) and waits for its
     * answer; an {@code X 1} to it throws {@link HelloRefused}.
     */
    Established connect(Socket socket, long nonce, boolean hello, EarlyAnswers early) throws Failed {
        long deadline = System.nanoTime() + config.connectTimeoutNanos();
        Socket io;
        OutputStream out;
        InputStream in;
        try {
            InetSocketAddress target = address.isUnresolved()
                    ? new InetSocketAddress(address.getHostString(), address.getPort()) : address;
            socket.setTcpNoDelay(true);
            socket.setKeepAlive(true);
            socket.connect(target, (int) Math.max(1, config.connectTimeoutNanos() / 1_000_000));
            io = config.sslContext() == null ? socket : tls(socket, deadline);
            out = io.getOutputStream();
            in = io.getInputStream();
        } catch (SSLException e) {
            throw new Failed("TLS handshake with " + Config.shown(address) + " failed: " + e.getMessage()
                    + (e.getMessage() != null && e.getMessage().contains("Unsupported or unrecognized SSL message")
                            ? " (the server speaks plaintext, not TLS)" : ""));
        } catch (java.net.UnknownHostException e) {
            throw new Failed("unknown host " + address.getHostString());
        } catch (IOException e) {
            throw new Failed("could not connect to " + Config.shown(address) + ": " + e.getMessage());
        }
        try {
            out.write(FrameWriter.encode(hello ? new Request.Hello(Wire.REVISION_1_4) : new Request.Ping(nonce)));
        } catch (IOException e) {
            throw new Failed("could not write the opening " + (hello ? "hello" : "ping") + " to "
                    + Config.shown(address) + ": " + e.getMessage());
        }
        Answer.Hello answer = awaitPong(io, in, hello ? -1 : nonce, hello, deadline, early);
        return new Established(in, out, answer);
    }

    /**
     * TLS over the connected socket, within the connect timeout. The session keeps closing the
     * plain socket: that aborts a blocked read or write at once, where closing the TLS socket
     * could wait to send close_notify.
     */
    private SSLSocket tls(Socket plain, long deadline) throws IOException {
        SSLSocket ssl = (SSLSocket) config.sslContext().getSocketFactory()
                .createSocket(plain, address.getHostString(), address.getPort(), true);
        ssl.setUseClientMode(true);
        if (config.verifyHostname()) {
            SSLParameters params = ssl.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            ssl.setSSLParameters(params);
        }
        ssl.setSoTimeout(millisLeft(deadline, "connect timeout before the TLS handshake"));
        ssl.startHandshake();
        ssl.setSoTimeout(0);
        return ssl;
    }

    /** Reads up to the Pong to {@code nonce}, or with {@code hello} up to the Hello's answer, which it returns. */
    private Answer.Hello awaitPong(Socket io, InputStream in, long nonce, boolean hello, long deadline,
            EarlyAnswers early) throws Failed {
        AnswerDecoder decoder = new AnswerDecoder();
        ByteBuffer one = ByteBuffer.allocate(1);
        boolean first = true;
        try {
            while (true) {
                io.setSoTimeout(millisLeft(deadline, "connect timeout"));
                int b = in.read();
                if (b < 0) {
                    // A TLS server closes on a plaintext client's first bytes without a word (Netty
                    // sends no alert); so does a server at its max-connections. Say both.
                    throw new Failed("the server " + Config.shown(address) + " closed the connection before "
                            + "answering" + (first && config.sslContext() == null
                                    ? " (a TLS server does that to a plaintext client: turn TLS on, e.g. --tls or "
                                            + "--cacert on the command line; a server at its max-connections does too)"
                                    : ""));
                }
                if (first && config.sslContext() == null && (b == 0x15 || b == 0x16)) {
                    // A TLS record (alert or handshake) where a plaintext answer should start
                    throw new Failed("the server " + Config.shown(address) + " speaks TLS; this client speaks plaintext"
                            + " (turn TLS on: --tls or --cacert on the command line)");
                }
                first = false;
                one.clear();
                one.put((byte) b).flip();
                Answer a = decoder.next(one);
                if (!hello && a instanceof Answer.Pong p && p.nonce() == nonce) {
                    io.setSoTimeout(0);
                    return null;
                }
                if (hello && a instanceof Answer.Hello h) {
                    io.setSoTimeout(0);
                    if (h.revision() >> 8 != 1 || (h.revision() & 0xFF) < 4) {
                        throw new HelloRefused("the server " + Config.shown(address) + " answered the hello with"
                                + " revision " + (h.revision() >> 8) + "." + (h.revision() & 0xFF));
                    }
                    return h;
                }
                if (hello && a instanceof Answer.Error x && x.code() == ErrorCode.UNKNOWN_OP.code()) {
                    throw new HelloRefused("the server " + Config.shown(address) + " speaks revision 1.3 (it answered"
                            + " the hello with error 1: " + x.message() + ")");
                }
                if (a != null && !early.accept(a)) {
                    throw new Failed("closed while waiting for the opening ping's answer");
                }
            }
        } catch (SocketTimeoutException e) {
            throw new Failed("no answer to the opening " + (hello ? "hello" : "ping") + " from "
                    + Config.shown(address) + " within the connect timeout");
        } catch (IOException e) {
            throw new Failed("connection failed: " + e.getMessage());
        } catch (ProtocolException e) {
            throw new Failed("the server sent an invalid answer: " + e.getMessage());
        }
    }

    private static int millisLeft(long deadline, String what) throws SocketTimeoutException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SocketTimeoutException(what);
        }
        return (int) Math.max(1, left / 1_000_000);
    }
}
