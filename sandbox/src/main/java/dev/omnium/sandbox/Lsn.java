package dev.omnium.sandbox;

/** A WAL position ("16/B374D848") as a comparable number. */
final class Lsn {

  /** Size of a WAL page header; a segment's first page has the long header. */
  private static final long SHORT_PAGE_HEADER = 24;
  private static final long LONG_PAGE_HEADER = 40;

  private Lsn() {}

  static long parse(String lsn) {
    int slash = lsn.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("not an LSN: " + lsn);
    }
    return (Long.parseLong(lsn.substring(0, slash), 16) << 32)
        | Long.parseLong(lsn.substring(slash + 1), 16);
  }

  static String format(long lsn) {
    return Long.toHexString(lsn >>> 32).toUpperCase() + "/"
        + Long.toHexString(lsn & 0xFFFFFFFFL).toUpperCase();
  }

  /**
   * The position a replica must have replayed to hold everything up to a primary's insert
   * position. When the last record ended exactly at a page boundary, the insert position points
   * past the next page's header, where no record can end; the replica then stops at the boundary.
   */
  static long replayTarget(long insertLsn, long walSegmentSize, long walBlockSize) {
    if (insertLsn % walSegmentSize == LONG_PAGE_HEADER) {
      return insertLsn - LONG_PAGE_HEADER;
    }
    if (insertLsn % walBlockSize == SHORT_PAGE_HEADER) {
      return insertLsn - SHORT_PAGE_HEADER;
    }
    return insertLsn;
  }
}
