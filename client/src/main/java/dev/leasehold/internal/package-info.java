/**
 * Not API: code that the server and the Spring Boot starter both need, which applications should
 * not call and which may change in any release. It lives in the client jar because that is the
 * one module both depend on (the server for {@code dev.leasehold.protocol}, the starter for the
 * client), so one copy serves the two. Depends only on {@code java.*}.
 */
package dev.leasehold.internal;
