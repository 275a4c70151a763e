package dev.leasehold.server;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.leasehold.protocol.Answer.Event;

/**
 * The events one watch of {@link Protocol14ModelIntegrationTests} received, with the checks of
 * 16.2, 16.3 and 6.8 that need no knowledge of other sessions ({@link #add}, as each event comes)
 * and those that need the whole model ({@link #checkAgainst}, once quiet). Checks answer null when
 * they hold, else what went wrong.
 */
final class Protocol14WatchLog {

    final long id;
    /** The observer session it is open on. */
    final int observer;
    final Protocol14KeyModel key;
    /** Opened at the start and never unobserved: the reference sequence for the key's other watches. */
    final boolean permanent;
    final List<Event> events = new ArrayList<>();
    boolean unobserved;

    Protocol14WatchLog(long id, int observer, Protocol14KeyModel key, boolean permanent) {
        this.id = id;
        this.observer = observer;
        this.key = key;
        this.permanent = permanent;
    }

    boolean coalescedAny() {
        return events.stream().anyMatch(Event::coalesced);
    }

    List<String> shownSequence() {
        return events.stream().map(Protocol14KeyModel::shown).toList();
    }

    /** Records {@code e}; null if it keeps the rules a single watch can check. */
    String add(Event e) {
        if (unobserved) {
            return "event after the watch's U: " + e;
        }
        Event previous = events.isEmpty() ? null : events.get(events.size() - 1);
        events.add(e);
        String shape = shape(e);
        if (shape != null) {
            return shape + ": " + e;
        }
        if (previous == null) {
            return e.cause() == Event.CAUSE_CURRENT ? null : "first event without cause 0: " + e;
        }
        if (e.cause() == Event.CAUSE_CURRENT) {
            return "cause 0 after the first event: " + e;
        }
        if (e.token() < previous.token()) {
            return "token went back from " + previous.token() + ": " + e;
        }
        if (!e.coalesced() && Protocol14KeyModel.shown(e).equals(Protocol14KeyModel.shown(previous))) {
            return "an event that changes nothing, not coalesced, after " + previous + ": " + e;
        }
        if (e.cause() == Event.CAUSE_GRANT && e.token() <= previous.token()) {
            return "a grant (cause 1) without a new token after " + previous + ": " + e;
        }
        return null;
    }

    /** What one event may show on this key in this run (no expiry, no lock-delay, no grace). */
    private String shape(Event e) {
        boolean emptyValue = e.value().length == 0;
        switch (e.state()) {
            case Event.STATE_HELD:
                if (!key.exclusiveUse || e.count() != 1 || e.limit() != 0) {
                    return "impossible H";
                }
                break;
            case Event.STATE_SHARED:
                if (!key.sharedUse || e.count() < 1 || e.count() > key.capacity || e.limit() != key.limit || !emptyValue) {
                    return "impossible S";
                }
                break;
            case Event.STATE_FREE:
                if (e.count() != 0 || e.limit() != 0 || !emptyValue) {
                    return "impossible F";
                }
                break;
            default:
                return "a state this run cannot have";
        }
        return switch (e.cause()) {
            case Event.CAUSE_CURRENT -> null;
            case Event.CAUSE_GRANT -> e.state() == Event.STATE_FREE ? "a grant that leaves the key free" : null;
            case Event.CAUSE_RELEASE -> e.state() == Event.STATE_HELD ? "a release without a grant that leaves it held" : null;
            case Event.CAUSE_VALUE -> e.state() == Event.STATE_HELD ? null : "a value set on a key not held exclusive";
            default -> "a cause this run cannot have (no expiry, delay or grace)";
        };
    }

    /**
     * Once quiet: every event shows only committed grants of this key and values their grant had,
     * in the order they were set (6.8 (5), 6.9); an open watch's last event is the key's state (6.8 (4)).
     */
    String checkAgainst() {
        int valueIndex = 0;
        long valueToken = 0;
        for (Event e : events) {
            if (e.token() > key.highestToken) {
                return "watch " + id + " shows token " + e.token() + " above every grant on " + key.name + ": " + e;
            }
            if (e.state() == Event.STATE_SHARED && !key.sharedTokens.contains(e.token())) {
                return "watch " + id + " shows S with token " + e.token() + ", not a shared grant of " + key.name;
            }
            if (e.state() == Event.STATE_HELD) {
                List<byte[]> history = key.valuesOf.get(e.token());
                if (history == null) {
                    return "watch " + id + " shows H with " + e.token() + ", not an exclusive grant of " + key.name;
                }
                int from = e.token() == valueToken ? valueIndex : 0;
                int at = -1;
                for (int i = from; i < history.size(); i++) {
                    if (Arrays.equals(history.get(i), e.value())) {
                        at = i;
                        break;
                    }
                }
                if (at < 0) {
                    return "watch " + id + " shows a value token " + e.token() + " never had after the previous one: " + e;
                }
                valueToken = e.token();
                valueIndex = at;
            }
        }
        if (!unobserved) {
            String last = events.isEmpty() ? "no event" : Protocol14KeyModel.shown(events.get(events.size() - 1));
            String expected = key.expectedShown();
            if (!last.equals(expected)) {
                return "watch " + id + " on " + key.name + " ends with " + last + ", the key is " + expected;
            }
        }
        return null;
    }

    /**
     * 6.8 (2) across watches: a watch that reported every change (nothing coalesced) shows a
     * contiguous part of what the key's permanent watch showed.
     */
    String checkWithin(Protocol14WatchLog reference) {
        if (coalescedAny() || reference.coalescedAny() || events.isEmpty()) {
            return null;
        }
        List<String> mine = shownSequence();
        List<String> all = reference.shownSequence();
        for (int start = 0; start + mine.size() <= all.size(); start++) {
            if (all.subList(start, start + mine.size()).equals(mine)) {
                return null;
            }
        }
        return "watch " + id + " on " + key.name + " shows " + mine + ", not a part of watch " + reference.id + "'s " + all;
    }
}
