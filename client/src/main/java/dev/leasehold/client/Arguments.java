package dev.leasehold.client;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import dev.leasehold.protocol.Keys;
import dev.leasehold.protocol.Wire;

/** Argument checks made before anything is sent; each failure says what is wrong. */
final class Arguments {

    private Arguments() {
    }

    /** The key's exact UTF-8 bytes, or an IllegalArgumentException. */
    static byte[] key(String key) {
        if (key == null) {
            throw new IllegalArgumentException("key is null");
        }
        ByteBuffer encoded;
        try {
            encoded = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(key));
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("key is not valid Unicode (it contains an unpaired surrogate)");
        }
        byte[] bytes = new byte[encoded.remaining()];
        encoded.get(bytes);
        String problem = Keys.problem(bytes, Wire.DEFAULT_MAX_KEY_BYTES);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return bytes;
    }

    static int waitSeconds(int wait) {
        if (wait < 0 || wait > Wire.MAX_SECONDS) {
            throw new IllegalArgumentException("wait is " + wait + " s; it must be 0 to " + Wire.MAX_SECONDS
                    + " seconds (0 = one immediate attempt)");
        }
        return wait;
    }

    static int leaseSeconds(int lease) {
        if (lease < 1 || lease > Wire.MAX_SECONDS) {
            throw new IllegalArgumentException("lease is " + lease + " s; it must be 1 to " + Wire.MAX_SECONDS
                    + " seconds");
        }
        return lease;
    }
}
