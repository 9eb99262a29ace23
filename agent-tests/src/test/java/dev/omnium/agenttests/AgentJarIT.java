package dev.omnium.agenttests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** The packaged agent jar itself: self-contained, relocated, nothing the application could trip over. */
class AgentJarIT {

  static List<String> entries() throws Exception {
    List<String> names = new ArrayList<>();
    try (JarFile jar = new JarFile(Apps.agentJar())) {
      for (JarEntry e : Collections.list(jar.entries())) names.add(e.getName());
    }
    return names;
  }

  @Test
  void manifestDeclaresPremainAgentmainRetransformAndTheAttachCommand() throws Exception {
    System.out.println("[agent-tests] agent under test: " + Apps.agentJar());
    try (JarFile jar = new JarFile(Apps.agentJar())) {
      Attributes a = jar.getManifest().getMainAttributes();
      assertEquals("dev.omnium.agent.OmniumAgent", a.getValue("Premain-Class"));
      assertEquals("dev.omnium.agent.OmniumAgent", a.getValue("Agent-Class"));
      assertEquals("true", a.getValue("Can-Retransform-Classes"));
      assertEquals("dev.omnium.agent.AttachMain", a.getValue("Main-Class"));
      assertNull(a.getValue("Class-Path"), "the agent jar must be self-contained");
    }
  }

  @Test
  void everyBundledLibraryIsRelocatedAndPgjdbcIsNotBundled() throws Exception {
    for (String name : entries()) {
      String path = name.startsWith("META-INF/versions/") ? name.replaceFirst("META-INF/versions/[0-9]+/", "") : name;
      for (String foreign : List.of("net/bytebuddy/", "com/zaxxer/", "org/slf4j/", "org/postgresql/", "dev/omnium/jdbc/", "org/checkerframework/")) {
        assertFalse(path.startsWith(foreign), "not relocated: " + name);
      }
      assertFalse(name.endsWith(".class") && name.startsWith("dev/omnium/agent/bundle/"),
          "bundle classes must be hidden from the system class loader: " + name);
      assertFalse(name.endsWith("module-info.class"), name);
    }
  }

  @Test
  void theDriverIsNeverOfferedToDriverManagerThroughTheClassPath() throws Exception {
    assertFalse(entries().contains("META-INF/services/java.sql.Driver"));
  }

  @Test
  void theBundleIsHiddenClassData() throws Exception {
    List<String> names = entries();
    assertTrue(names.contains("omnium-hidden/dev/omnium/agent/bundle/jdbc/OmniumDriver.classdata"));
    assertTrue(names.contains("omnium-hidden/dev/omnium/agent/bundle/jdbc/AgentSupport.classdata"));
    assertTrue(names.contains("omnium-hidden/dev/omnium/agent/bundle/hikari/HikariDataSource.classdata"));
    assertTrue(names.contains("omnium-hidden/META-INF/services/dev.omnium.agent.bundle.slf4j.spi.SLF4JServiceProvider"));
  }

  @Test
  void byteBuddysMultiReleaseClassesSitAtTheirRelocatedPaths() throws Exception {
    List<String> versioned = new ArrayList<>();
    for (String name : entries()) {
      if (name.startsWith("META-INF/versions/") && name.endsWith(".class")) versioned.add(name);
    }
    assertFalse(versioned.isEmpty(), "Byte Buddy 1.18 ships META-INF/versions/24 classes");
    for (String name : versioned) {
      assertTrue(name.matches("META-INF/versions/[0-9]+/dev/omnium/agent/shaded/bytebuddy/.*"), name);
    }
  }

  @Test
  void withoutArgumentsTheJarPrintsItsUsage() throws Exception {
    AppProcess cli = AppProcess.start("agent-usage", List.of(AppProcess.JAVA, "-jar", Apps.agentJar()), null);
    try {
      assertEquals(2, cli.await(Duration.ofSeconds(30)), cli.transcript());
      assertTrue(String.join("\n", cli.stderr()).contains("usage: java -jar omnium-agent.jar attach PID"), cli.transcript());
    } finally {
      cli.close();
    }
  }
}
