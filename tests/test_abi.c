/*
** tests/test_abi.c: the plugin ABI stays what plugins were built against.
**
** How it works: the layout table next to DYNG_BACKEND_ABI (engine/backend.h)
** is expanded twice, once into the numbers it states and once into what the
** compiler computes (sizeof, _Alignof, offsetof), and the two are compared
** entry by entry; each struct's fields must also cover it with nothing but
** the padding C puts between them, so the table misses no field.  The error codes are compared with a list written here, name by
** name and number by number, so a code inserted, renumbered or dropped in
** engine/errcode.h fails.  The ABI headers are included alone, so a header
** of the engine pulled into them shows up as a defined include guard.
*/
#include "test_util.h"

#include <stdalign.h>
#include <string.h>

#include "engine/plugin.h" /* and through it backend.h, types.h, errcode.h */

#if defined(DYNG_GRAPH_H) || defined(DYNG_ERROR_H) || defined(DYNG_ALLOC_H)
#error "an ABI header includes a header of the engine outside the ABI"
#endif

#include "engine/error.h" /* after the check above: the codes' names */

/* One row of the layout, as the table states it and as compiled. */
typedef struct layout_row {
  const char *type;
  const char *field; /* NULL: the struct's own row */
  size_t off_or_size, size_or_align;       /* the table's numbers */
  size_t got_off_or_size, got_size_or_align; /* the compiler's */
} layout_row;

#define ROW_S(T, size, align) {#T, NULL, size, align, sizeof(T), alignof(T)},
#define ROW_F(T, f, off, size) {#T, #f, off, size, offsetof(T, f), sizeof(((T *)0)->f)},
static const layout_row rows[] = {DYNG_ABI_LAYOUT(ROW_S, ROW_F)};
#define N_ROWS (sizeof rows / sizeof rows[0])

/* The alignment of each field's type, in the order of rows[] (0 for a
** struct's own row), for the padding check. */
#define ALIGN_S(T, size, align) 0,
#define ALIGN_F(T, f, off, size) __alignof__(((T *)0)->f),
static const size_t field_align[] = {DYNG_ABI_LAYOUT(ALIGN_S, ALIGN_F)};

static void test_table_is_this_abi(void **state) {
  (void)state;
  /* A bump of DYNG_BACKEND_ABI comes with the table of that ABI. */
  assert_int_equal(DYNG_ABI_LAYOUT_OF, DYNG_BACKEND_ABI);
}

static void test_layout_matches_compiler(void **state) {
  (void)state;
#if defined(__x86_64__) && defined(__LP64__)
  for (size_t i = 0; i < N_ROWS; i++) {
    const layout_row *r = &rows[i];
    if (r->off_or_size != r->got_off_or_size || r->size_or_align != r->got_size_or_align)
      fail_msg("%s%s%s: table says %zu, %zu; compiler says %zu, %zu", r->type, r->field ? "." : "",
               r->field ? r->field : "", r->off_or_size, r->size_or_align, r->got_off_or_size,
               r->got_size_or_align);
  }
#else
  skip();
#endif
}

/* The table lists every field: between two of a struct's fields, and after
** its last one, lies exactly the padding the C layout rules put there, so a
** field left out of the table (one that does not fill padding) shows as a
** gap.  A field added to a struct later moves what follows it or the
** struct's size, which test_layout_matches_compiler sees. */
static size_t round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

static void test_table_covers_every_field(void **state) {
  (void)state;
  size_t n_structs = 0;
  for (size_t i = 0; i < N_ROWS; n_structs++) {
    const layout_row *s = &rows[i];
    assert_null(s->field);
    size_t end = 0, j = i + 1;
    for (; j < N_ROWS && rows[j].field; j++) {
      const layout_row *f = &rows[j];
      assert_string_equal(f->type, s->type);
      if (f->got_off_or_size != round_up(end, field_align[j]))
        fail_msg("%s: bytes %zu .. %zu before .%s hold a field the table lacks", s->type, end,
                 f->got_off_or_size, f->field);
      end = f->got_off_or_size + f->got_size_or_align;
    }
    assert_true(j > i + 1);
    if (s->got_off_or_size != round_up(end, s->got_size_or_align))
      fail_msg("%s: its tail after byte %zu holds a field the table lacks", s->type, end);
    i = j;
  }
  assert_int_equal(n_structs, 10);
}

/* The codes and their numbers, written out: never derived from the header. */
static const struct {
  const char *name;
  int value;
} pinned[] = {
    {"DYNG_ENOMEM", -1}, {"DYNG_EINVAL", -2}, {"DYNG_ENOTFOUND", -3},  {"DYNG_EWEIGHT", -4},
    {"DYNG_ETOOBIG", -5}, {"DYNG_ESTATE", -6}, {"DYNG_EBACKEND", -7}, {"DYNG_EINTERRUPTED", -8},
    {"DYNG_EOVERFLOW", -9}, {"DYNG_EGAVEUP", -10}, {"DYNG_ENOROOM", -11},
};
#define N_PINNED (sizeof pinned / sizeof pinned[0])

#define CODE_ROW(name, number, msg) {"DYNG_E" #name, DYNG_E##name},
static const struct {
  const char *name;
  int value;
} header_codes[] = {DYNG_ERRNO_MAP(CODE_ROW)};
#define N_HEADER (sizeof header_codes / sizeof header_codes[0])

static void test_error_numbers_pinned(void **state) {
  (void)state;
  assert_int_equal(DYNG_OK, 0);
  assert_int_equal(N_HEADER, N_PINNED);
  for (size_t i = 0; i < N_PINNED; i++) {
    assert_string_equal(header_codes[i].name, pinned[i].name);
    if (header_codes[i].value != pinned[i].value)
      fail_msg("%s is %d; the ABI pins it at %d", pinned[i].name, header_codes[i].value, pinned[i].value);
  }
}

/* Every code has its own name and message, and no two codes share a number. */
static void test_error_text_for_every_code(void **state) {
  (void)state;
  assert_string_equal(dyng_err_name(DYNG_OK), "DYNG_OK");
  for (size_t i = 0; i < N_HEADER; i++) {
    assert_string_equal(dyng_err_name(header_codes[i].value), header_codes[i].name);
    assert_string_not_equal(dyng_strerror(header_codes[i].value), "unknown error");
    for (size_t j = 0; j < i; j++) assert_int_not_equal(header_codes[i].value, header_codes[j].value);
  }
  assert_string_equal(dyng_err_name(-(int)N_HEADER - 1), "DYNG_EUNKNOWN");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_is_this_abi),
      cmocka_unit_test(test_layout_matches_compiler),
      cmocka_unit_test(test_table_covers_every_field),
      cmocka_unit_test(test_error_numbers_pinned),
      cmocka_unit_test(test_error_text_for_every_code),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
