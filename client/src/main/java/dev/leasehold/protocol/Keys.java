package dev.leasehold.protocol;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Key helpers shared by server and client. */
public final class Keys {

    private Keys() {
    }

    /**
     * The exact UTF-8 bytes of a key given as text, checked against the key rules (1 to
     * {@code maxKeyBytes} bytes, valid UTF-8, no newline).
     *
     * @throws IllegalArgumentException naming the problem (an unpaired surrogate, or {@link #problem})
     */
    public static byte[] utf8(String key, int maxKeyBytes) {
        if (key == null) {
            throw new IllegalArgumentException("key is null");
        }
        byte[] bytes = hasSurrogate(key) ? strictUtf8(key) : key.getBytes(StandardCharsets.UTF_8);
        String problem = problem(bytes, maxKeyBytes);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return bytes;
    }

    /**
     * Whether {@code s} has a surrogate char: only then can it hold an unpaired one, which
     * {@link String#getBytes} would silently turn into {@code ?}. Keys are nearly always without
     * (ASCII, or letters of the basic plane), so the common path is one scan and the JDK's own
     * encoding, with no encoder and no buffers per call.
     */
    private static boolean hasSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isSurrogate(s.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    /** UTF-8 of {@code key}, refusing an unpaired surrogate. */
    private static byte[] strictUtf8(String key) {
        ByteBuffer encoded;
        try {
            encoded = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).encode(CharBuffer.wrap(key));
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("key is not valid Unicode (it contains an unpaired surrogate)");
        }
        byte[] bytes = new byte[encoded.remaining()];
        encoded.get(bytes);
        return bytes;
    }

    /**
     * Why {@code key} is not acceptable under {@code maxKeyBytes}, or {@code null} if it is:
     * 1..max bytes of strict UTF-8 without 0x0A.
     */
    public static String problem(byte[] key, int maxKeyBytes) {
        if (key.length == 0) {
            return "key is empty";
        }
        if (key.length > maxKeyBytes) {
            return "key is " + key.length + " UTF-8 bytes, more than the limit of " + maxKeyBytes;
        }
        for (byte b : key) {
            if (b == Wire.TERMINATOR) {
                return "key contains a newline (0x0A), which ends a frame";
            }
        }
        if (!Utf8.isValid(key)) {
            return "key is not valid UTF-8";
        }
        return null;
    }

    /**
     * The key as text safe for a log line: control characters, backslash and invalid bytes are
     * escaped, and long keys are cut, so a hostile key cannot forge or flood log lines.
     */
    public static String printable(byte[] key) {
        String text = Utf8.isValid(key) ? new String(key, StandardCharsets.UTF_8) : null;
        StringBuilder out = new StringBuilder(Math.min(key.length, 80) + 2).append('"');
        if (text == null) {
            for (byte b : key) {
                if (out.length() > 80) {
                    return out.append("...\"").toString();
                }
                int c = b & 0xFF;
                if (c >= 0x20 && c < 0x7F && c != '\\' && c != '"') {
                    out.append((char) c);
                } else {
                    out.append(String.format("\\x%02X", c));
                }
            }
        } else {
            for (int i = 0; i < text.length(); i++) {
                if (out.length() > 80) {
                    return out.append("...\"").toString();
                }
                char c = text.charAt(i);
                if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == '\u2028' || c == '\u2029') {
                    out.append(String.format("\\u%04X", (int) c));
                } else if (c == '\\' || c == '"') {
                    out.append('\\').append(c);
                } else {
                    out.append(c);
                }
            }
        }
        return out.append('"').toString();
    }
}
