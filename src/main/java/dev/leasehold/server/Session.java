package dev.leasehold.server;

import dev.leasehold.registry.SessionHandle;
import io.netty.channel.Channel;

/** One client connection as the registry sees it: its channel, so waiters' answers can find it. */
final class Session extends SessionHandle {

    private final Channel channel;

    Session(Channel channel) {
        this.channel = channel;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public String toString() {
        return "session " + channel.remoteAddress();
    }
}
