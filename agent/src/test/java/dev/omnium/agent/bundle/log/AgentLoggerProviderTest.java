package dev.omnium.agent.bundle.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.event.Level;

class AgentLoggerProviderTest {

  @Test
  void theSettingNamesTheMostDetailedLevelPrinted() {
    assertEquals(Level.INFO, AgentLoggerProvider.threshold(null));
    assertEquals(Level.INFO, AgentLoggerProvider.threshold("verbose"));
    assertEquals(Level.ERROR, AgentLoggerProvider.threshold("off"));
    assertEquals(Level.ERROR, AgentLoggerProvider.threshold("error"));
    assertEquals(Level.WARN, AgentLoggerProvider.threshold(" Warn "));
    assertEquals(Level.DEBUG, AgentLoggerProvider.threshold("DEBUG"));
    assertEquals(Level.TRACE, AgentLoggerProvider.threshold("trace"));
  }

  @Test
  void aLoggerPrintsItsLevelAndLessDetailedOnes() {
    Logger info = new AgentLoggerProvider.Factory(Level.INFO).getLogger("dev.omnium.jdbc.Router");
    assertTrue(info.isErrorEnabled());
    assertTrue(info.isWarnEnabled());
    assertTrue(info.isInfoEnabled());
    assertFalse(info.isDebugEnabled());
    assertFalse(info.isTraceEnabled());
    Logger trace = new AgentLoggerProvider.Factory(Level.TRACE).getLogger("dev.omnium.jdbc.Router");
    assertTrue(trace.isTraceEnabled());
  }

  @Test
  void thePoolStartsAtWarnUnlessDebugging() {
    String pool = "dev.omnium.agent.bundle.hikari.pool.HikariPool";
    assertFalse(new AgentLoggerProvider.Factory(Level.INFO).getLogger(pool).isInfoEnabled());
    assertTrue(new AgentLoggerProvider.Factory(Level.INFO).getLogger(pool).isWarnEnabled());
    assertFalse(new AgentLoggerProvider.Factory(Level.ERROR).getLogger(pool).isWarnEnabled());
    assertTrue(new AgentLoggerProvider.Factory(Level.DEBUG).getLogger(pool).isDebugEnabled());
  }
}
