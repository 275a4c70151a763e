package dev.leasehold.server;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicReference;

import javax.net.ssl.SSLPeerUnverifiedException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

/**
 * TLS for the protocol port. Every session gets an {@link SslHandler} from the <em>current</em>
 * {@link SslContext}; {@link #update} swaps the context (certificate rotation), so new sessions
 * use the new certificate while open ones keep the engine they started with.
 *
 * <p>There is no plaintext fallback: a client that does not complete a TLS handshake within
 * the handshake timeout is closed without a single protocol byte being read. Failed handshakes
 * (plaintext clients, untrusted or missing client certificates, scanners) are logged at WARN at
 * most once per {@value #WARN_EVERY_SECONDS} s for plaintext clients and once for all other
 * failures, with a count of those not shown, and each one at DEBUG, so a misconfigured fleet
 * cannot flood the log.
 */
public final class ServerTls {

    private static final Logger LOG = LoggerFactory.getLogger(ServerTls.class);
    static final long WARN_EVERY_SECONDS = 60;
    private static final long WARN_EVERY_NANOS = WARN_EVERY_SECONDS * 1_000_000_000L;

    static final String HANDLER = "leasehold.tls";
    static final String HANDSHAKE = "leasehold.tls-handshake";
    static final String FIRST_BYTE = "leasehold.tls-first-byte";

    private final AtomicReference<SslContext> context;
    /** Plaintext clients and other failures are rate-limited apart: a flood of one hides no other. */
    private final WarnLimit plaintextWarnings = new WarnLimit(System::nanoTime, WARN_EVERY_NANOS);
    private final WarnLimit otherWarnings = new WarnLimit(System::nanoTime, WARN_EVERY_NANOS);

    public ServerTls(SslContext initial) {
        this.context = new AtomicReference<>(initial);
    }

    /** New sessions use {@code next} from now on; open sessions are unaffected. */
    public void update(SslContext next) {
        context.set(next);
    }

    /** Adds the TLS handler and its handshake watcher in front of everything else. */
    void install(Channel channel) {
        SslHandler ssl = context.get().newHandler(channel.alloc());
        channel.pipeline().addFirst(HANDLER, ssl).addAfter(HANDLER, HANDSHAKE, new HandshakeWatcher())
                .addBefore(HANDLER, FIRST_BYTE, new FirstByteCheck());
    }

    /** The client's certificate, or null if it sent none (or the channel has no TLS). */
    static X509Certificate peerCertificate(Channel channel) {
        SslHandler ssl = channel.pipeline().get(SslHandler.class);
        if (ssl == null) {
            return null;
        }
        try {
            Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x ? x : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    private void handshakeFailed(Channel channel, Throwable cause) {
        Throwable t = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        boolean plaintext = t instanceof NotSslRecordException;
        String why = plaintext ? "not a TLS client (plaintext?): this port accepts TLS only"
                : t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
        LOG.debug("TLS handshake with {} failed: {}", channel.remoteAddress(), why);
        long more = (plaintext ? plaintextWarnings : otherWarnings).tryWarn();
        if (more >= 0) {
            LOG.warn("TLS handshake with {} failed: {}{}; further such failures are logged at DEBUG, and at most "
                    + "once per {} s at WARN", channel.remoteAddress(), why,
                    more > 0 ? " (" + more + " more since the last warning)" : "", WARN_EVERY_SECONDS);
        }
    }

    /**
     * Closes a plaintext client at its first byte. Every TLS record starts with a content type of
     * 20-23; every Leasehold request starts with an ASCII letter. Left to {@link SslHandler}, a
     * plaintext frame was read as an SSLv2 header whenever its fifth byte was 2 or 3 (a Ping whose
     * random nonce has that byte: 1 in 128), and the handler then waited for a 4 KB record until
     * the handshake timeout, so the client heard nothing instead of a close. SSLv2-style hellos,
     * the only TLS start outside 20-23, are sent by no client this port serves (JDK, Go, OpenSSL).
     */
    private final class FirstByteCheck extends ChannelInboundHandlerAdapter {

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf b && b.isReadable()) {
                int first = b.getUnsignedByte(b.readerIndex());
                if (first < 20 || first > 23) {
                    b.release();
                    HandshakeWatcher watcher = ctx.pipeline().get(HandshakeWatcher.class);
                    if (watcher != null) {
                        watcher.failed = true; // the close below fails the handshake: one report, this one
                    }
                    handshakeFailed(ctx.channel(), new NotSslRecordException(
                            String.format("first byte 0x%02x starts no TLS record", first)));
                    ctx.close();
                    return;
                }
                ctx.pipeline().remove(this);
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** Logs a failed handshake (rate-limited) and closes the channel; quiet about the exception it causes. */
    private final class HandshakeWatcher extends ChannelInboundHandlerAdapter {

        private boolean failed;

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent done) {
                if (!done.isSuccess() && !failed) {
                    failed = true;
                    handshakeFailed(ctx.channel(), done.cause());
                    ctx.close();
                }
                ctx.pipeline().remove(this);
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A bad handshake shows up as an exception too (before or after the event): one report.
            if (!failed) {
                failed = true;
                handshakeFailed(ctx.channel(), cause);
            }
            ctx.close();
        }
    }
}
