/*
** tests/test_choice.c: the backend decision of engine/choice.c (rules R1-R8
** of engine/choice.h) without SQLite, a driver or a plugin file: each case
** fills a dyng_discovery by hand (driver version, devices, plugin
** descriptions whose init is a counter), settles it and asks dyng_choose(),
** checking the backend, its name, the reason and which inits ran.  The
** expected plugin of the ranking cases is recomputed by brute force from
** the rule as docs/backends.md states it, not copied from a run.
*/
#include "tests/test_util.h"

#include "config.h"
#include "engine/choice.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include <string.h>

/* ---- fake plugins -------------------------------------------------------- */

static int g_init_calls[8];     /* init calls per fake, by its slot */
static int g_init_fails[8];     /* 1: that fake's init fails */
static int g_last_device;       /* the device ordinal the last init got */
static const dyng_host *g_last_host; /* and what the host lent it */
static int g_warnings;          /* warnings given through the hooks */
static char g_warning[1024];    /* the last one */

static dyng_backend g_backend;  /* a copy of the CPU's table, told apart by address */

#define FAKE_INIT(k)                                                  \
  static int fake_init_##k(int device, const dyng_host *host, char *err, size_t n_err) { \
    g_init_calls[k]++;                                                \
    g_last_device = device;                                           \
    g_last_host = host;                                               \
    if (!g_init_fails[k]) return 0;                                   \
    snprintf(err, n_err, "fake %d refuses", k);                       \
    return DYNG_EBACKEND;                                             \
  }
FAKE_INIT(0)
FAKE_INIT(1)
FAKE_INIT(2)
FAKE_INIT(3)
static int (*const g_inits[4])(int, const dyng_host *, char *, size_t) = {fake_init_0, fake_init_1, fake_init_2, fake_init_3};

static dyng_plugin g_desc[8];
static char g_paths[8][64];

static void warn(void *ctx, const char *message) {
  (void)ctx;
  g_warnings++;
  snprintf(g_warning, sizeof g_warning, "%s", message);
}

static const dyng_choice_hooks g_hooks = {warn, NULL};

static void reset(dyng_discovery *d, int driver_version) {
  dyng_discovery_init(d);
  d->driver_version = driver_version;
  snprintf(d->driver_note, sizeof d->driver_note, "no NVIDIA driver: test");
  memset(g_init_calls, 0, sizeof g_init_calls);
  memset(g_init_fails, 0, sizeof g_init_fails);
  g_warnings = 0;
  g_warning[0] = 0;
  g_last_device = -1;
  g_last_host = NULL;
  g_backend = *dyng_backend_cpu();
}

static void add_device(dyng_discovery *d, const char *name, int cc) {
  dyng_device *x = &d->device[d->n_device];
  memset(x, 0, sizeof *x);
  snprintf(x->name, sizeof x->name, "%s", name);
  x->cc = cc;
  x->ordinal = d->n_device++;
}

/* Adds a plugin file dyng_cuda<name_major>.so in slot k (init fake_init_k)
** whose description says it was built with CUDA built_major. */
static dyng_plugin *add_plugin(dyng_discovery *d, int k, int name_major, int built_major) {
  dyng_plugin *desc = &g_desc[k];
  *desc = (dyng_plugin){DYNG_BACKEND_ABI, PACKAGE_VERSION, built_major, built_major * 1000, "sm_90", g_inits[k],
                        &g_backend};
  snprintf(g_paths[k], sizeof g_paths[k], "/plugins/dyng_cuda%d.so", name_major);
  dyng_plugin_found *p = &d->plugin[d->n_plugin++];
  memset(p, 0, sizeof *p);
  p->path = g_paths[k];
  p->name_major = name_major;
  p->loaded = 1;
  p->entry = desc;
  snprintf(p->name, sizeof p->name, "cuda%d", name_major);
  return desc;
}

static int ask(dyng_discovery *d, int pref, int start, long pid, dyng_choice *out) {
  dyng_choice_request req = {pref, start, d, pid, &g_hooks};
  return dyng_choose(&req, out);
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* ---- cases ---------------------------------------------------------------- */

static void test_no_plugin_gives_the_cpu_silently(void **state) {
  (void)state;
  static dyng_discovery d;
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  dyng_choice_settle(&d, &g_hooks);
  dyng_choice c;
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
  assert_ptr_equal(c.backend, dyng_backend_cpu());
  assert_string_equal(c.name, "cpu");
  assert_string_equal(c.reason, "no GPU backend plugin (dyng_cuda*.so) is installed");
  assert_int_equal(g_warnings, 0);
}

/* The rule of docs/backends.md, by brute force over the majors installed:
** the driver's own major when present, else the newest older one; -1 when
** none is old enough. */
static int expected_major(const int *majors, int n, int driver_major) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (majors[i] == driver_major) return driver_major;
    if (majors[i] < driver_major && majors[i] > best) best = majors[i];
  }
  return best;
}

static void test_ranking_takes_the_drivers_major_then_the_newest_older(void **state) {
  (void)state;
  static dyng_discovery d;
  static const int sets[][4] = {{12, 13, 14, 0}, {14, 12, 0, 0}, {11, 12, 0, 0}, {13, 11, 12, 0}, {14, 0, 0, 0},
                                {12, 11, 14, 13}};
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
    int majors[4], n = 0;
    for (int i = 0; i < 4 && sets[s][i]; i++) majors[n++] = sets[s][i];
    for (int driver = 11; driver <= 15; driver++) {
      reset(&d, driver * 1000 + 20);
      add_device(&d, "H200", 90);
      for (int i = 0; i < n; i++) add_plugin(&d, i, majors[i], majors[i]);
      dyng_choice_settle(&d, &g_hooks);
      dyng_choice c;
      assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
      int want = expected_major(majors, n, driver);
      char name[16];
      snprintf(name, sizeof name, "cuda%d", want);
      if (want < 0) {
        assert_string_equal(c.name, "cpu");
        assert_true(starts_with(c.reason, "no plugin is usable: needs a driver for CUDA"));
        assert_int_equal(g_warnings, 1);
      } else {
        assert_string_equal(c.name, name);
        assert_ptr_equal(c.backend, &g_backend);
        assert_int_equal(g_warnings, 0);
      }
      /* Exactly the chosen one was started, once. */
      for (int i = 0; i < n; i++) assert_int_equal(g_init_calls[i], majors[i] == want);
      /* A newer major than the driver's is unusable with its reason. */
      for (int i = 0; i < d.n_plugin; i++)
        if (d.plugin[i].cuda_major > driver) {
          assert_int_equal(d.plugin[i].state, DYNG_PLUGIN_UNUSABLE);
          assert_string_equal(d.plugin[i].brief, "driver too old");
        }
    }
  }
}

static void test_foreign_plugins_are_never_used(void **state) {
  (void)state;
  static dyng_discovery d;
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 13, 13)->abi = DYNG_BACKEND_ABI + 1;
  add_plugin(&d, 1, 13, 13)->version = "0.0.0-other";
  add_plugin(&d, 2, 12, 11);
  add_plugin(&d, 3, 12, 12)->init = NULL;
  dyng_choice_settle(&d, &g_hooks);
  dyng_choice c;
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
  assert_string_equal(c.name, "cpu");
  for (int k = 0; k < 4; k++) assert_int_equal(g_init_calls[k], 0);
  char abi[80];
  snprintf(abi, sizeof abi, "built for backend ABI %d; this dyng has ABI %d", DYNG_BACKEND_ABI + 1, DYNG_BACKEND_ABI);
  assert_string_equal(d.plugin[0].reason, abi);
  assert_null(d.plugin[0].desc);
  assert_true(starts_with(d.plugin[1].reason, "built for dyng 0.0.0-other; this is dyng "));
  assert_string_equal(d.plugin[2].reason, "its name says CUDA 12 but it was built with CUDA 11");
  assert_string_equal(d.plugin[3].reason, "incomplete description (no init or backend)");
  for (int i = 0; i < 4; i++) assert_int_equal(d.plugin[i].state, DYNG_PLUGIN_UNUSABLE);
  /* One warning names each plugin. */
  assert_int_equal(g_warnings, 1);
  assert_true(starts_with(g_warning, "dyng: no usable GPU plugin, using the CPU: dyng_cuda13.so (ABI "));
  assert_non_null(strstr(g_warning, "(incomplete); see dyng_config('plugins')"));
}

static void test_cpu_only_and_require_cuda(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  /* DYNG_CPU_ONLY: the CPU, nothing judged or started. */
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 13, 13);
  d.cpu_only = 1;
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
  assert_string_equal(c.name, "cpu");
  assert_string_equal(c.reason, "DYNG_CPU_ONLY is set");
  assert_int_equal(g_init_calls[0], 0);
  /* ... and with CUDA required, an error that names both. */
  d.require_cuda = 1;
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), DYNG_EBACKEND);
  assert_true(c.required && c.refused);
  assert_null(c.backend);
  assert_string_equal(c.name, "none");
  assert_string_equal(c.reason, "CUDA was required (DYNG_REQUIRE_CUDA) but cannot be used: DYNG_CPU_ONLY is set");
  assert_int_equal(ask(&d, DYNG_PREF_CUDA, 0, 1, &c), DYNG_EBACKEND);
  assert_string_equal(c.reason, "CUDA was required (backend 'cuda') but cannot be used: DYNG_CPU_ONLY is set");
  /* "cpu" wins over DYNG_REQUIRE_CUDA. */
  assert_int_equal(ask(&d, DYNG_PREF_CPU, 1, 1, &c), 0);
  assert_string_equal(c.reason, "the CPU was asked for");
  assert_int_equal(c.required, 0);
}

static void test_require_cuda_without_a_usable_plugin_is_an_error(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 13, 13);
  add_plugin(&d, 1, 12, 12);
  g_init_fails[0] = g_init_fails[1] = 1;
  d.require_cuda = 1;
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), DYNG_EBACKEND);
  assert_string_equal(c.reason, "CUDA was required (DYNG_REQUIRE_CUDA) but cannot be used: no plugin could be "
                                "started: failed to start: fake 0 refuses");
  assert_int_equal(g_init_calls[0], 1);
  assert_int_equal(g_init_calls[1], 1);
  assert_int_equal(g_warnings, 1);
  /* Asked again: nothing is started twice. */
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), DYNG_EBACKEND);
  assert_int_equal(g_init_calls[0] + g_init_calls[1], 2);
  assert_int_equal(g_warnings, 1);
  /* No plugin at all and "cuda" asked for. */
  reset(&d, 0);
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(ask(&d, DYNG_PREF_CUDA, 1, 1, &c), DYNG_EBACKEND);
  assert_string_equal(c.reason, "CUDA was required (backend 'cuda') but cannot be used: no GPU backend plugin "
                                "(dyng_cuda*.so) is installed");
}

static void test_a_plugin_that_fails_to_start_passes_to_the_next(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  reset(&d, 13000);
  add_device(&d, "old", 70);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 12, 12);
  add_plugin(&d, 1, 13, 13);
  g_init_fails[1] = 1;
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(d.i_device, 1);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
  assert_string_equal(c.name, "cuda12");
  assert_int_equal(g_last_device, 1);
  /* The plugin borrows the engine's loop over ranges. */
  assert_non_null(g_last_host);
  assert_ptr_equal(g_last_host->parallel_for, dyng_parallel_ranges);
  assert_string_equal(c.reason, "dyng_cuda12.so started on H200 (compute capability 9.0)");
  assert_int_equal(g_init_calls[1], 1);
  assert_string_equal(d.plugin[0].reason, "failed to start: fake 1 refuses");
  assert_int_equal(g_warnings, 0);
}

static void test_a_preview_starts_nothing(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 13, 13);
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 0, 1, &c), 0);
  assert_string_equal(c.name, "cuda13");
  assert_null(c.backend);
  assert_string_equal(c.reason, "dyng_cuda13.so selected, started by the first graph that uses it; usable with "
                                "the CUDA 13.0 driver");
  assert_int_equal(g_init_calls[0], 0);
  assert_int_equal(ask(&d, DYNG_PREF_CPU, 1, 1, &c), 0);
  assert_int_equal(g_init_calls[0], 0);
}

static void test_a_forked_child_does_not_use_the_parents_plugin(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 13, 13);
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 100, &c), 0);
  assert_string_equal(c.name, "cuda13");
  /* The child (another pid) gets the CPU with the remedy, start or preview. */
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 200, &c), 0);
  assert_string_equal(c.name, "cpu");
  assert_string_equal(c.reason, DYNG_FORK_REMEDY);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 0, 200, &c), 0);
  assert_string_equal(c.reason, DYNG_FORK_REMEDY);
  assert_int_equal(ask(&d, DYNG_PREF_CUDA, 1, 200, &c), DYNG_EBACKEND);
  assert_string_equal(c.reason, "CUDA was required (backend 'cuda') but cannot be used: " DYNG_FORK_REMEDY);
  assert_int_equal(g_init_calls[0], 1);
  /* The parent keeps it. */
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 100, &c), 0);
  assert_string_equal(c.name, "cuda13");
}

static void test_too_old_a_device_leaves_the_plugin_unused(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  /* Each side of the threshold. */
  for (int cc = DYNG_MIN_COMPUTE_CAPABILITY - 1; cc <= DYNG_MIN_COMPUTE_CAPABILITY; cc++) {
    reset(&d, 13000);
    add_device(&d, "T", cc);
    add_plugin(&d, 0, 13, 13);
    dyng_choice_settle(&d, &g_hooks);
    assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
    if (cc < DYNG_MIN_COMPUTE_CAPABILITY) {
      assert_string_equal(c.name, "cpu");
      char want[200];
      snprintf(want, sizeof want,
               "no plugin is usable: no device of compute capability %d.%d or newer (T is %d.%d)",
               DYNG_MIN_COMPUTE_CAPABILITY / 10, DYNG_MIN_COMPUTE_CAPABILITY % 10, cc / 10, cc % 10);
      assert_string_equal(c.reason, want);
      assert_int_equal(g_init_calls[0], 0);
    } else {
      assert_string_equal(c.name, "cuda13");
      assert_int_equal(g_init_calls[0], 1);
    }
  }
}

static int fake_tree_fetch(void *state, dyng_sssp_tree *t, const uint32_t *vertices, uint32_t n) {
  (void)state, (void)t, (void)vertices, (void)n;
  return 0;
}

static void test_a_backend_with_half_the_tree_reader_is_refused(void **state) {
  (void)state;
  static dyng_discovery d;
  dyng_choice c;
  reset(&d, 13000);
  add_device(&d, "H200", 90);
  add_plugin(&d, 0, 13, 13);
  g_backend.tree_fetch = fake_tree_fetch;
  g_backend.tree_path = NULL;
  dyng_choice_settle(&d, &g_hooks);
  assert_int_equal(ask(&d, DYNG_PREF_AUTO, 1, 1, &c), 0);
  assert_string_equal(c.name, "cpu");
  assert_string_equal(d.plugin[0].reason, "failed to start: its backend has only one of tree_fetch and tree_path");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_plugin_gives_the_cpu_silently),
      cmocka_unit_test(test_ranking_takes_the_drivers_major_then_the_newest_older),
      cmocka_unit_test(test_foreign_plugins_are_never_used),
      cmocka_unit_test(test_cpu_only_and_require_cuda),
      cmocka_unit_test(test_require_cuda_without_a_usable_plugin_is_an_error),
      cmocka_unit_test(test_a_plugin_that_fails_to_start_passes_to_the_next),
      cmocka_unit_test(test_a_preview_starts_nothing),
      cmocka_unit_test(test_a_forked_child_does_not_use_the_parents_plugin),
      cmocka_unit_test(test_too_old_a_device_leaves_the_plugin_unused),
      cmocka_unit_test(test_a_backend_with_half_the_tree_reader_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
