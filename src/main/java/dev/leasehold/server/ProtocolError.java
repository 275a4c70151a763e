package dev.leasehold.server;

import dev.leasehold.protocol.ErrorCode;

/** The decoder's verdict on malformed input: answer {@code X code message}, then close. */
record ProtocolError(ErrorCode code, String message) {
}
