package dev.leasehold.client;

/** Keys in messages. */
final class Keys {

    private Keys() {
    }

    /** The key in quotes, with control characters escaped (keys may contain any but 0x0A). */
    static String quoted(String key) {
        return "'" + dev.leasehold.protocol.Keys.printable(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)) + "'";
    }
}
