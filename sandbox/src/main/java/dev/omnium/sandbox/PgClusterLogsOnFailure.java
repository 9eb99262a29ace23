package dev.omnium.sandbox;

import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * JUnit 5 extension: when a test (or a lifecycle method) fails, prints the server logs of every
 * {@link PgCluster} open in this JVM to {@code System.err}, so a CI report shows what the servers
 * said. Use with {@code @ExtendWith(PgClusterLogsOnFailure.class)}.
 *
 * <p>Logs are printed right after the failing test method, while the cluster still runs (before
 * {@code @AfterEach}/{@code @AfterAll} close it); a failure detected later (in {@code @AfterEach})
 * is reported through {@link TestWatcher#testFailed}.
 */
public class PgClusterLogsOnFailure
    implements AfterTestExecutionCallback, TestWatcher, LifecycleMethodExecutionExceptionHandler {

  private static final ExtensionContext.Namespace NS =
      ExtensionContext.Namespace.create(PgClusterLogsOnFailure.class);
  private static final String PRINTED = "printed";

  /** Creates the extension (JUnit instantiates it). */
  public PgClusterLogsOnFailure() {}

  @Override
  public void afterTestExecution(ExtensionContext context) {
    if (context.getExecutionException().isPresent()) {
      print(context, context.getExecutionException().get());
    }
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    print(context, cause);
  }

  @Override
  public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  private static void print(ExtensionContext context, Throwable cause) {
    // Once per failing test: afterTestExecution and testFailed both see the same failure.
    if (context.getStore(NS).get(PRINTED) != null) {
      return;
    }
    context.getStore(NS).put(PRINTED, Boolean.TRUE);
    printAll(System.err, context.getDisplayName() + " in " + context.getTestClass()
        .map(Class::getName).orElse("?") + testMethod(context) + " failed: " + cause);
  }

  private static String testMethod(ExtensionContext context) {
    Optional<Method> m = context.getTestMethod();
    return m.map(method -> "#" + method.getName()).orElse("");
  }

  /**
   * Prints the logs of every open cluster.
   *
   * @param out where to print
   * @param reason a line saying why
   */
  public static void printAll(PrintStream out, String reason) {
    List<PgCluster> open = ClusterRegistry.open();
    synchronized (out) {
      out.println("##### " + reason);
      if (open.isEmpty()) {
        out.println("##### no PgCluster is open in this JVM");
      }
      for (PgCluster c : open) {
        out.println("##### server logs of " + c);
        c.printLogs(out);
      }
      out.println("##### end of server logs");
      out.flush();
    }
  }
}
