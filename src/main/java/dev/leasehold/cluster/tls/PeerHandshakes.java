package dev.leasehold.cluster.tls;

import java.net.SocketAddress;

import org.apache.ratis.thirdparty.io.grpc.netty.GrpcHttp2ConnectionHandler;
import org.apache.ratis.thirdparty.io.grpc.netty.InternalProtocolNegotiator;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandler;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslHandler;
import org.apache.ratis.thirdparty.io.netty.util.AsciiString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listening side's TLS negotiator with a watcher in front: gRPC's own server TLS negotiation
 * does the handshake (client certificate required, {@link PeerTrustManager} deciding), and the
 * watcher reports each failed handshake to {@link PeerRefusals} with the remote address and the
 * reason. gRPC hands the connection to Ratis only after a successful handshake, so a refused
 * peer never gets a Raft message read. A connection closed before it sent a byte (a TCP probe) is
 * no refusal.
 */
final class PeerHandshakes implements InternalProtocolNegotiator.ProtocolNegotiator {

    private static final Logger LOG = LoggerFactory.getLogger(PeerHandshakes.class);

    private final InternalProtocolNegotiator.ProtocolNegotiator delegate;
    private final PeerRefusals refusals;

    PeerHandshakes(InternalProtocolNegotiator.ProtocolNegotiator delegate, PeerRefusals refusals) {
        this.delegate = delegate;
        this.refusals = refusals;
    }

    @Override
    public AsciiString scheme() {
        return delegate.scheme();
    }

    @Override
    public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
        return new Watcher(delegate.newHandler(grpcHandler));
    }

    @Override
    public void close() {
        delegate.close();
    }

    /** Why a handshake failed, from its cause chain. */
    static PeerRefusals.Reason classify(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof PeerTrustManager.PeerRefusedException r) {
                return r.reason();
            }
            if (t.getClass().getSimpleName().equals("NotSslRecordException")) {
                return PeerRefusals.Reason.PLAINTEXT;
            }
            String m = t.getMessage() == null ? "" : t.getMessage();
            if (m.contains("Empty client certificate chain") || m.contains("null cert chain")
                    || m.contains("certificate_required") || m.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE")) {
                return PeerRefusals.Reason.NO_CERTIFICATE;
            }
        }
        return PeerRefusals.Reason.HANDSHAKE;
    }

    private static String detail(Throwable cause) {
        Throwable t = cause;
        while (t.getCause() != null && !(t instanceof PeerTrustManager.PeerRefusedException)) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    /** First in the pipeline until the handshake ends; then it leaves. */
    private final class Watcher extends ChannelInboundHandlerAdapter {

        private final ChannelHandler inner;
        private boolean watching;
        private boolean sentBytes;

        Watcher(ChannelHandler inner) {
            this.inner = inner;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            ctx.pipeline().addAfter(ctx.name(), null, inner);
            watch(ctx);
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.fireChannelActive(); // gRPC installs its SslHandler when the channel becomes active
            watch(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            sentBytes = true;
            watch(ctx);
            ctx.fireChannelRead(msg);
        }

        private void watch(ChannelHandlerContext ctx) {
            if (watching) {
                return;
            }
            SslHandler ssl = ctx.pipeline().get(SslHandler.class);
            if (ssl == null) {
                return;
            }
            watching = true;
            SocketAddress remote = ctx.channel().remoteAddress();
            ssl.handshakeFuture().addListener(f -> {
                if (!f.isSuccess()) {
                    if (sentBytes) {
                        refusals.refused(remote, classify(f.cause()), detail(f.cause()));
                    } else {
                        LOG.debug("Raft connection from {} closed before its handshake: {}", remote, f.cause().toString());
                    }
                }
                if (ctx.pipeline().context(this) != null) {
                    ctx.pipeline().remove(this);
                }
            });
        }
    }
}
