package dev.omnium.spring.boot;

import dev.omnium.jdbc.OmniumDriver;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when {@code spring.datasource.url} is a {@code jdbc:omnium:} URL. */
final class OnOmniumUrlCondition implements Condition {
  @Override
  public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
    String url = context.getEnvironment().getProperty(OmniumEnvironmentPostProcessor.URL);
    return url != null && new OmniumDriver().acceptsURL(url.trim());
  }
}
