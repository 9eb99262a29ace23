package dev.omnium.fw.mybatis;

import dev.omnium.sandbox.testkit.Where;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.annotations.Insert;
import org.apache.ibatis.annotations.Mapper;
import org.apache.ibatis.annotations.Options;
import org.apache.ibatis.annotations.Param;
import org.apache.ibatis.annotations.Select;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.data.jpa.JpaRepositoriesAutoConfiguration;
import org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration;
import org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.Transactional;

/** Spring Boot 3 + mybatis-spring-boot-starter: the mapper below is found and wired by auto-configuration. */
@SpringBootConfiguration
@EnableAutoConfiguration(exclude = {HibernateJpaAutoConfiguration.class, JpaRepositoriesAutoConfiguration.class,
    FlywayAutoConfiguration.class})
@Import(MyBatisApp.Shelf.class)
public class MyBatisApp {

  @Mapper
  public interface BookMapper {
    /** Never served from MyBatis' session cache: each call is a statement on the server. */
    @Select(Where.SQL)
    @Options(flushCache = Options.FlushCachePolicy.TRUE, useCache = false)
    Map<String, Object> where();

    @Select("SELECT title FROM book WHERE id = #{id}")
    String title(int id);

    @Select("SELECT id FROM book ORDER BY id")
    List<Integer> ids();

    @Insert("INSERT INTO book (id, title) VALUES (#{id}, #{title})")
    int insert(@Param("id") int id, @Param("title") String title);
  }

  static Where where(BookMapper mapper) {
    Map<String, Object> row = mapper.where();
    return new Where((Boolean) row.get("in_recovery"), ((Number) row.get("port")).intValue(), (String) row.get("app"),
        ((Number) row.get("pid")).intValue(), (Boolean) row.get("read_only_default"));
  }

  public static class Shelf {
    private final BookMapper mapper;

    public Shelf(BookMapper mapper) {
      this.mapper = mapper;
    }

    @Transactional(readOnly = true)
    public List<Object> browse(int id) {
      Where first = where(mapper);
      String title = mapper.title(id);
      List<Integer> ids = mapper.ids();
      return List.of(first, title, ids, where(mapper));
    }

    @Transactional
    public Where add(int id, String title) {
      mapper.insert(id, title);
      return where(mapper);
    }

    @Transactional(readOnly = true)
    public Where addInReadOnly(int id, String title) {
      Where w = where(mapper);
      mapper.insert(id, title);
      return w;
    }
  }
}
