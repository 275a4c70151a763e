/**
 * The Leasehold wire protocol, version 1, as plain JDK code: opcodes, frame layouts, decoded
 * frames as records, strict UTF-8 validation, and a JDK-only answer decoder.
 *
 * <p>Shared by the server and the official client, so this package depends on nothing but
 * {@code java.*}. See {@code PROTOCOL.md} for the contract.
 */
package dev.leasehold.protocol;
