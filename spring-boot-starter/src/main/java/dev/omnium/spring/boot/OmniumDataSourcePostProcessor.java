package dev.omnium.spring.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.omnium.jdbc.OmniumDriver;
import java.util.Properties;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.env.Environment;

/**
 * Hands the {@code omnium.*} properties to every HikariCP DataSource whose URL is an omnium URL,
 * as driver properties: the driver lets a key in the URL win over them, and a key the user set in
 * {@code spring.datasource.hikari.data-source-properties} is left as it is.
 */
final class OmniumDataSourcePostProcessor implements BeanPostProcessor {
  private final Environment environment;
  private final OmniumDataSources registry;
  private Properties settings;

  OmniumDataSourcePostProcessor(Environment environment, OmniumDataSources registry) {
    this.environment = environment;
    this.registry = registry;
  }

  @Override
  public Object postProcessBeforeInitialization(Object bean, String beanName) {
    if (bean instanceof HikariDataSource hikari) {
      String url = hikari.getJdbcUrl();
      if (url != null && new OmniumDriver().acceptsURL(url)) {
        Properties own = settings();
        for (String key : own.stringPropertyNames()) {
          if (hikari.getDataSourceProperties().getProperty(key) == null) {
            hikari.addDataSourceProperty(key, own.getProperty(key));
          }
        }
        registry.add(beanName, hikari,
            OmniumDataSources.applicationName(url, hikari.getDataSourceProperties()));
      }
    }
    return bean;
  }

  OmniumDataSources registry() {
    return registry;
  }

  private synchronized Properties settings() {
    if (settings == null) {
      settings = OmniumSettings.from(environment);
    }
    return settings;
  }
}
