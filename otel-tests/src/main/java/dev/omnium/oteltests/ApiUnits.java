package dev.omnium.oteltests;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;

/** Each unit of work is an INTERNAL span of the application (loaded only with the API present). */
final class ApiUnits extends TracedApp.Units {
  private final Tracer tracer = GlobalOpenTelemetry.getTracer("traced-app");

  @Override
  void run(int n, TracedApp.Work work) throws Exception {
    Span span = tracer.spanBuilder("unit-" + n).startSpan();
    try (Scope ignored = span.makeCurrent()) {
      synchronized (System.out) {
        System.out.println("UNIT " + n + " " + span.getSpanContext().getTraceId() + " "
            + span.getSpanContext().getSpanId());
        System.out.flush();
      }
      work.run();
    } finally {
      span.end();
    }
  }
}
