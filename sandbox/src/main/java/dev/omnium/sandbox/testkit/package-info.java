/**
 * The sandbox as a test kit: {@link dev.omnium.sandbox.testkit.PgSandbox}, a JUnit 5 extension
 * that starts a real primary with streaming replicas and a heartbeat, builds omnium URLs for it
 * and shuts the driver and the servers down; {@link dev.omnium.sandbox.testkit.Poll} for bounded
 * waits; {@link dev.omnium.sandbox.testkit.Where} and {@link dev.omnium.sandbox.testkit.Sessions}
 * for asserting on what the servers saw.
 */
package dev.omnium.sandbox.testkit;
