package dev.leasehold.server;

import java.io.IOException;
import java.util.Map;
import java.util.function.Predicate;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;

/**
 * An observer session of {@link Protocol14ModelIntegrationTests}: opens and ends watches, and
 * reads its frames, handing each event to its {@link Protocol14WatchLog} (which checks it).
 * Watch ids are unique over the run ({@code watches} is shared by every observer).
 */
final class Protocol14Observer {

    final int id;
    private final RawClient client;
    private final Map<Long, Protocol14WatchLog> watches;
    private final Protocol14Trace trace;
    private long nextNonce = 1;

    Protocol14Observer(int id, RawClient client, Map<Long, Protocol14WatchLog> watches, Protocol14Trace trace) {
        this.id = id;
        this.client = client;
        this.watches = watches;
        this.trace = trace;
    }

    /** {@code O}, read up to the watch's first event. */
    void observe(long watchId, Protocol14KeyModel key, boolean permanent) throws IOException {
        Protocol14WatchLog w = new Protocol14WatchLog(watchId, id, key, permanent);
        watches.put(w.id, w);
        trace.note("observer %d: O %d %s", id, w.id, key.name);
        client.send(new Request.Observe(w.id, key.bytes));
        // Not a Ping: section 1 orders no Pong after an O's first event, and this server writes
        // that event once it is showable, after the Pong of the same read.
        readUntil(a -> !w.events.isEmpty());
        trace.check(w.events.get(0).watch() == w.id, "first event of " + w.id);
        trace.count("O");
    }

    /** {@code U}, read up to its answer: the watch's last frame. */
    void unobserve(Protocol14WatchLog w) throws IOException {
        trace.note("observer %d: U %d", id, w.id);
        client.send(new Request.Unobserve(w.id));
        readUntil(new Answer.Unobserved(w.id)::equals);
        w.unobserved = true;
        trace.count("U");
    }

    /** A Ping, reading the events that come before its Pong. */
    void ping() throws IOException {
        long nonce = nextNonce++;
        client.send(new Request.Ping(nonce));
        readUntil(new Answer.Pong(nonce)::equals);
    }

    /**
     * Once quiet, 6.8 (4): every open watch's last event becomes its key's state. A Ping is no
     * barrier for events (section 1 orders Pongs only among Pings), so after one the session is
     * read until every watch shows the model's state, for at most 5 s; then nothing more may come.
     */
    void settle() throws IOException {
        ping();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!showsTheModel() && System.nanoTime() < deadline) {
            Answer a = client.poll(50);
            if (a != null) {
                onFrame(a);
            }
        }
        Answer late = client.poll(150);
        trace.check(late == null, "observer " + id + " got " + late + " after the keys went quiet");
    }

    private boolean showsTheModel() {
        return watches.values().stream().filter(w -> w.observer == id && !w.unobserved)
                .allMatch(w -> !w.events.isEmpty() && Protocol14KeyModel.shown(w.events.get(w.events.size() - 1))
                        .equals(w.key.expectedShown()));
    }

    /** Reads frames until {@code done} holds after one; a Pong or {@code U} must be the one awaited. */
    private void readUntil(Predicate<Answer> done) throws IOException {
        while (true) {
            Answer a = client.next(10_000);
            if (a instanceof Answer.Pong || a instanceof Answer.Unobserved) {
                trace.check(done.test(a), "observer " + id + " got " + a + " unasked");
                return;
            }
            onFrame(a);
            if (done.test(a)) {
                return;
            }
        }
    }

    private void onFrame(Answer a) {
        trace.check(a instanceof Answer.Event, "observer " + id + " got " + a + " while reading its events");
        Answer.Event e = (Answer.Event) a;
        Protocol14WatchLog w = watches.get(e.watch());
        trace.check(w != null && w.observer == id, "an event of a watch not opened on observer " + id + ": " + e);
        String problem = w.add(e);
        trace.check(problem == null, "watch " + w.id + " on " + w.key.name + ": " + problem);
        trace.count("events");
    }
}
