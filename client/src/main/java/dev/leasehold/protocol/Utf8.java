package dev.leasehold.protocol;

/**
 * Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates (U+D800..U+DFFF), nothing
 * above U+10FFFF, no truncated sequences. {@code new String(bytes, UTF_8)} would silently replace
 * such bytes, so two different invalid keys could collide; the protocol refuses them instead.
 */
public final class Utf8 {

    private Utf8() {
    }

    public static boolean isValid(byte[] b) {
        return isValid(b, 0, b.length);
    }

    public static boolean isValid(byte[] b, int offset, int length) {
        int i = offset;
        int end = offset + length;
        while (i < end) {
            int c = b[i] & 0xFF;
            if (c < 0x80) {
                i++;
                continue;
            }
            int need;
            int min;
            int cp;
            if (c >= 0xC2 && c <= 0xDF) {
                need = 1;
                min = 0x80;
                cp = c & 0x1F;
            } else if (c >= 0xE0 && c <= 0xEF) {
                need = 2;
                min = 0x800;
                cp = c & 0x0F;
            } else if (c >= 0xF0 && c <= 0xF4) {
                need = 3;
                min = 0x10000;
                cp = c & 0x07;
            } else {
                return false; // continuation byte as lead, C0/C1 overlong leads, F5..FF
            }
            if (i + need >= end) {
                return false; // truncated sequence
            }
            for (int k = 1; k <= need; k++) {
                int cc = b[i + k] & 0xFF;
                if ((cc & 0xC0) != 0x80) {
                    return false;
                }
                cp = (cp << 6) | (cc & 0x3F);
            }
            if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                return false;
            }
            i += need + 1;
        }
        return true;
    }
}
