package dev.omnium.jdbc;

import java.sql.SQLException;
import java.sql.Wrapper;
import java.util.Objects;

/**
 * A wrapper over one physical JDBC object: honest {@link #unwrap}/{@link #isWrapperFor} (this
 * wrapper first, then whatever the physical object wraps), as HikariCP's proxies answer. The
 * superclass of the hand-written bases of the generated delegation.
 *
 * @param <D> the physical object's interface
 */
abstract class DelegatingWrapper<D extends Wrapper> implements Wrapper {
  final D delegate;

  DelegatingWrapper(D delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The physical object. */
  final D delegate() {
    return delegate;
  }

  @Override
  public final <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    return delegate.unwrap(iface);
  }

  @Override
  public final boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || delegate.isWrapperFor(iface);
  }

  /** {@code ResultSetProxy[physical]}: the generated class's name and the physical object. */
  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + delegate + "]";
  }
}
