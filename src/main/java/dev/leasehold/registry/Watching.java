package dev.leasehold.registry;

import dev.leasehold.protocol.Answer;

/**
 * The registry half of watches (PROTOCOL.md section 16), all under the key's lane lock: which
 * keys a lane operation changed ({@link #touched}), the one event each such key gets at the end
 * of the operation ({@link #publish}), and linking a watch to its key.
 *
 * <p><b>One decision, one event.</b> The machinery marks a watched key with the cause of each
 * change it makes (a grant, a Release, an expiry, a delay end, a value set, the end of the grace); a grant
 * outranks the others (a value set, cause 5, comes only from a {@code V}), so a Release that hands the key on, or an expiry followed by a grant from
 * the queue, is one event with cause 1 (16.2). When the operation ends ({@link Lanes#inLane})
 * each marked key's state is read once; if it shows the same five things as its last event
 * (a shared expiry into its delay, which keeps its slot) there is no event.
 *
 * <p><b>Watched keys stay known.</b> A watched key that becomes FREE stays in its lane's table,
 * with its watch list and the highest token granted on it ({@link KeyState#highestToken}), until
 * its last watch ends ({@link KeyMachine#settle} keeps it).
 */
final class Watching {

    private Watching() {
    }

    /** {@code s} changed for {@code cause} (lane lock held): its watches get an event when the operation ends. */
    static void touched(Lane lane, KeyState s, int cause) {
        if (s.watchFirst == null) {
            return;
        }
        if (!s.dirty) {
            s.dirty = true;
            s.dirtyCause = cause;
            s.nextDirty = lane.dirtyFirst;
            lane.dirtyFirst = s;
        } else if (s.dirtyCause != Answer.Event.CAUSE_GRANT) {
            s.dirtyCause = cause; // a grant decides the cause of the whole decision (16.2)
        }
    }

    /** Lane lock held, at the end of an operation: one event per changed watched key. */
    static void publish(Lane lane, boolean grace) {
        KeyState s = lane.dirtyFirst;
        lane.dirtyFirst = null;
        while (s != null) {
            KeyState next = s.nextDirty;
            s.nextDirty = null;
            s.dirty = false;
            if (s.watchFirst != null) {
                KeyEvent e = current(s, grace, s.dirtyCause);
                if (!e.showsSameAs(s.lastEvent)) {
                    s.lastEvent = e;
                    for (Watch w = s.watchFirst; w != null; w = w.nextOnKey) {
                        tell(lane, w, e);
                    }
                }
            }
            s = next;
        }
    }

    /**
     * Links {@code w} to {@code s} and tells it its first event: the key's state now, cause 0
     * (lane lock held; {@code s} is in its lane's table). Pending changes of the operation are
     * published first, so the other watches of the key do not see the new watch's state twice.
     */
    static void add(Lane lane, KeyState s, Watch w, boolean grace) {
        publish(lane, grace);
        KeyEvent now = current(s, grace, Answer.Event.CAUSE_CURRENT);
        if (s.watchFirst == null) {
            s.lastEvent = now;
        }
        w.key = s;
        w.prevOnKey = null;
        w.nextOnKey = s.watchFirst;
        if (s.watchFirst != null) {
            s.watchFirst.prevOnKey = w;
        }
        s.watchFirst = w;
        tell(lane, w, now);
    }

    /** Unlinks {@code w} from its key (lane lock held). */
    static void remove(Watch w) {
        KeyState s = w.key;
        if (s == null) {
            return;
        }
        if (w.prevOnKey == null) {
            s.watchFirst = w.nextOnKey;
        } else {
            w.prevOnKey.nextOnKey = w.nextOnKey;
        }
        if (w.nextOnKey != null) {
            w.nextOnKey.prevOnKey = w.prevOnKey;
        }
        w.prevOnKey = null;
        w.nextOnKey = null;
        w.key = null;
        if (s.watchFirst == null) {
            s.lastEvent = null;
        }
    }

    private static void tell(Lane lane, Watch w, KeyEvent e) {
        w.decided(e);
        lane.notify(w);
    }

    /** What an event shows of {@code s} now (PROTOCOL.md 16.2), with {@code cause}. */
    static KeyEvent current(KeyState s, boolean grace, int cause) {
        if (s.isActive()) {
            return new KeyEvent(Answer.Event.STATE_HELD, cause, s.token, 1, 0, s.value()); // never modified in place
        }
        if (s.isDelayed()) {
            return new KeyEvent(Answer.Event.STATE_DELAYED, cause, s.delayedToken, 0, 0, null);
        }
        long highest = s.highestToken;
        if (s.sharedSlots > 0) {
            for (SharedSlot g = s.sharedFirst; g != null; g = g.next) {
                highest = Math.max(highest, Math.max(g.token, g.delayedToken));
            }
            int limit = s.sharedMode == null ? 0 : s.sharedMode.limit();
            return new KeyEvent(Answer.Event.STATE_SHARED, cause, highest, s.sharedSlots, limit, null);
        }
        return new KeyEvent(grace ? Answer.Event.STATE_GRACE : Answer.Event.STATE_FREE, cause, highest, 0, 0, null);
    }
}
