/*
** tests/test_backends.c: how dyng finds the driver, the devices and its
** backend plugins, and which backend it chooses (engine/choice.c, reported
** by ext/backends.c), on any machine: every scenario runs
** tests/backend_probe in a process of its own
** with a fake driver (libcuda.so.1), a fake NVML (libnvidia-ml.so.1) and
** fake plugins (tests/fakes/) found through LD_LIBRARY_PATH and
** DYNG_PLUGIN_PATH, and checks the dyng_config() report, the warnings
** logged, which fake functions ran, and that queries still answer.
*/
#include "tests/test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char g_root[256];      /* scratch folder of this run */
static char g_fakes[512];     /* where the fakes were built */

/* ---- files -------------------------------------------------------------- */

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  if (in < 0 || out < 0) fail_msg("copy %s -> %s: %s", from, to, strerror(errno));
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof buf)) > 0) assert_int_equal(write(out, buf, (size_t)n), n);
  close(in);
  close(out);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A folder under the root, created empty; its path in a static ring. */
static const char *folder(const char *name) {
  static char paths[8][512];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, 512, "%s/%s", g_root, name);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
  assert_int_equal(system(cmd), 0);
  assert_int_equal(mkdir(p, 0755), 0);
  return p;
}

/* Installs the built fake `variant` (fakeplugin13, ...) as `as` in dir. */
static void install(const char *dir, const char *variant, const char *as) {
  char from[700], to[700];
  snprintf(from, sizeof from, "%s/.libs/%s.so", g_fakes, variant);
  snprintf(to, sizeof to, "%s/%s", dir, as);
  copy_file(from, to);
}

/* A folder with the fake driver (and the fake NVML unless !nvml). */
static const char *driver_folder(const char *name, int nvml) {
  const char *dir = folder(name);
  install(dir, "libfakecuda", "libcuda.so.1");
  if (nvml) {
    install(dir, "libfakenvml", "libnvidia-ml.so.1");
  } else {
    /* Found before a real NVML on a GPU machine, and not loadable. */
    char path[700];
    snprintf(path, sizeof path, "%s/libnvidia-ml.so.1", dir);
    write_file(path, "not NVML\n");
  }
  return dir;
}

/* The environment entries that point a probe at the driver folder `lib`
** and the plugin folder `dir` (600 bytes each). */
static void env_paths(char *ld, char *pp, const char *lib, const char *dir) {
  snprintf(ld, 600, "LD_LIBRARY_PATH=%s", lib);
  snprintf(pp, 600, "DYNG_PLUGIN_PATH=%s", dir);
}

/* ---- running a probe ---------------------------------------------------- */

typedef struct probe {
  char *out;     /* stdout */
  char *err;     /* stderr: the LOG lines */
  char *calls;   /* what the fakes recorded */
  json_t *config; /* the last line of out that parses as a JSON object */
} probe;

static char *slurp(int fd) {
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  ssize_t r;
  while ((r = read(fd, s + n, cap - n - 1)) > 0) {
    n += (size_t)r;
    if (cap - n < 2) s = realloc(s, cap *= 2);
  }
  s[n] = 0;
  return s;
}

/* Runs the probe with the environment changed by `env` ("K=V" sets, "K"
** unsets; NULL-terminated) and the SQL statements `sql` (NULL-terminated);
** "SELECT dyng_config()" runs last. */
static probe run(const char *const *env, const char *const *sql) {
  probe p = {0};
  char log_path[600];
  snprintf(log_path, sizeof log_path, "%s/calls.log", g_root);
  unlink(log_path);
  int out_pipe[2], err_pipe[2];
  assert_int_equal(pipe(out_pipe), 0);
  assert_int_equal(pipe(err_pipe), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]), close(err_pipe[0]);
    /* A clean slate: nothing of the machine's own GPU setup leaks in. */
    unsetenv("DYNG_CPU_ONLY"), unsetenv("DYNG_REQUIRE_CUDA"), unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("FAKE_CUDA_DEVICES"), unsetenv("FAKE_CUDA_DRIVER"), unsetenv("FAKE_PLUGIN_FAIL_INIT"), unsetenv("FAKE_PLUGIN_NO_MEMORY");
    setenv("FAKE_CUDA_LOG", log_path, 1);
    setenv("DYNG_PLUGIN_PATH", folder("no-plugins"), 1);
    setenv("LD_LIBRARY_PATH", folder("no-driver"), 1);
    for (int i = 0; env && env[i]; i++) {
      const char *eq = strchr(env[i], '=');
      if (!eq) {
        unsetenv(env[i]);
        continue;
      }
      char key[128];
      snprintf(key, sizeof key, "%.*s", (int)(eq - env[i]), env[i]);
      setenv(key, eq + 1, 1);
    }
    char probe_path[600];
    snprintf(probe_path, sizeof probe_path, "%s/tests/backend_probe", getenv("DYNG_BUILDDIR"));
    const char *argv[32];
    int argc = 0;
    argv[argc++] = probe_path;
    for (int i = 0; sql && sql[i] && argc < 30; i++) argv[argc++] = sql[i];
    argv[argc++] = "SELECT dyng_config()";
    argv[argc] = NULL;
    execve(probe_path, (char *const *)argv, environ);
    _exit(127);
  }
  close(out_pipe[1]), close(err_pipe[1]);
  p.out = slurp(out_pipe[0]);
  p.err = slurp(err_pipe[0]);
  close(out_pipe[0]), close(err_pipe[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("probe failed (status %d): %s\n%s", status, p.out, p.err);
  FILE *f = fopen(log_path, "r");
  if (f) {
    p.calls = slurp(fileno(f));
    fclose(f);
  } else {
    p.calls = strdup("");
  }
  const char *last = p.out, *line = p.out;
  while ((line = strstr(line, "\n{")) != NULL) last = ++line;
  p.config = json_loads(last, JSON_DISABLE_EOF_CHECK, NULL);
  if (!p.config || !json_is_object(p.config)) fail_msg("no dyng_config() report in:\n%s", p.out);
  return p;
}

static void probe_free(probe *p) {
  free(p->out), free(p->err), free(p->calls);
  json_decref(p->config);
}

/* ---- reading the report ------------------------------------------------- */

/* The string at a path of keys and array indices ("backend.name",
** "plugins.0.state"); fails the test when it is missing. */
static const char *str_at(const probe *p, const char *path) {
  json_t *j = p->config;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *tok = strtok(buf, "."); tok && j; tok = strtok(NULL, "."))
    j = json_is_array(j) ? json_array_get(j, (size_t)atoi(tok)) : json_object_get(j, tok);
  if (!j) fail_msg("no %s in the report:\n%s", path, p->out);
  if (json_is_string(j)) return json_string_value(j);
  if (json_is_true(j)) return "true";
  if (json_is_false(j)) return "false";
  if (json_is_null(j)) return "null";
  static char num[64];
  snprintf(num, sizeof num, "%lld", (long long)json_integer_value(j));
  return num;
}

static size_t len_at(const probe *p, const char *key) {
  json_t *j = json_object_get(p->config, key);
  assert_true(json_is_array(j));
  return json_array_size(j);
}

static void contains(const char *haystack, const char *needle) {
  if (!strstr(haystack, needle)) fail_msg("'%s' not found in:\n%s", needle, haystack);
}

static void lacks(const char *haystack, const char *needle) {
  if (strstr(haystack, needle)) fail_msg("'%s' unexpectedly in:\n%s", needle, haystack);
}

/* The index of the plugin whose file is `file`, failing when absent. */
static int plugin_index(const probe *p, const char *file) {
  json_t *a = json_object_get(p->config, "plugins");
  for (size_t i = 0; i < json_array_size(a); i++) {
    const char *path = json_string_value(json_object_get(json_array_get(a, i), "path"));
    const char *base = path ? strrchr(path, '/') : NULL;
    if (base && strcmp(base + 1, file) == 0) return (int)i;
  }
  fail_msg("plugin %s not reported:\n%s", file, p->out);
  return -1;
}

static const char *plugin_field(const probe *p, const char *file, const char *field) {
  char path[128];
  snprintf(path, sizeof path, "plugins.%d.%s", plugin_index(p, file), field);
  return str_at(p, path);
}

/* A small graph and a query that must answer through whatever backend. */
static const char *const k_graph[] = {
    "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
    "INSERT INTO e VALUES (1,2,1),(2,3,2),(1,3,5),(3,4,1);"
    "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)",
    "SELECT group_concat(node || ':' || dist, ' ') FROM dyng_sssp('g', 1)",
    NULL};

/* ---- scenarios ---------------------------------------------------------- */

static void test_no_plugin_is_silent_and_uses_the_cpu(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1);
  char ld[600];
  snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", lib);
  const char *env[] = {ld, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  probe p = run(env, k_graph);
  assert_string_equal(str_at(&p, "backend.name"), "cpu");
  contains(str_at(&p, "backend.reason"), "no GPU backend plugin");
  assert_int_equal(len_at(&p, "plugins"), 0);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  assert_string_equal(str_at(&p, "graphs.0.residency"), "host");
  contains(p.out, "1:0.0 2:1.0 3:3.0 4:4.0");
  /* The driver and the device were read, and nothing logged. */
  assert_string_equal(str_at(&p, "driver.cuda_version"), "13000");
  assert_string_equal(str_at(&p, "devices.0.name"), "NVIDIA H200");
  assert_string_equal(str_at(&p, "devices.0.compute_capability"), "9.0");
  assert_string_equal(str_at(&p, "discovery.devices_from"), "nvml");
  assert_string_equal(p.err, "");
  lacks(p.calls, "cuInit");
  probe_free(&p);
}

static void test_matching_plugin_is_chosen_on_first_use(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin12", "dyng_cuda12.so");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  /* Reporting starts nothing. */
  const char *none[] = {NULL};
  probe p = run(env, none);
  assert_string_equal(str_at(&p, "backend.name"), "cuda13");
  contains(str_at(&p, "backend.reason"), "selected, started by the first graph");
  assert_string_equal(plugin_field(&p, "dyng_cuda13.so", "state"), "selected");
  assert_string_equal(plugin_field(&p, "dyng_cuda13.so", "started"), "false");
  assert_string_equal(plugin_field(&p, "dyng_cuda12.so", "state"), "available");
  lacks(p.calls, "init ");
  lacks(p.calls, "cuInit");
  probe_free(&p);
  /* A graph starts it, on the H200, and answers. */
  p = run(env, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.residency"), "device");
  assert_string_equal(str_at(&p, "graphs.0.device_bytes"), "4096");
  assert_string_equal(plugin_field(&p, "dyng_cuda13.so", "started"), "true");
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"), "started on NVIDIA H200");
  contains(p.calls, "init 13 0");
  lacks(p.calls, "init 12");
  lacks(p.calls, "cuInit");
  contains(p.out, "1:0.0 2:1.0 3:3.0 4:4.0");
  assert_string_equal(p.err, "");
  probe_free(&p);
}

static void test_older_driver_takes_the_newest_plugin_it_can_run(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin12", "dyng_cuda12.so");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  install(dir, "fakeplugin14", "dyng_cuda14.so");
  install(dir, "fakeplugin11", "dyng_cuda11.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  /* A CUDA 12.4 driver: 12 matches; 13 and 14 need a newer driver. */
  const char *env[] = {ld, pp, "FAKE_CUDA_DRIVER=12040", "FAKE_CUDA_DEVICES=NVIDIA A100:80:40960", NULL};
  probe p = run(env, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda12");
  assert_string_equal(str_at(&p, "driver.cuda"), "12.4");
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"), "needs a driver for CUDA 13; the driver supports CUDA 12.4");
  assert_string_equal(plugin_field(&p, "dyng_cuda14.so", "state"), "unusable");
  assert_string_equal(plugin_field(&p, "dyng_cuda11.so", "state"), "available");
  /* Ranked: the match first, the usable older one next, unusable last. */
  assert_int_equal(plugin_index(&p, "dyng_cuda12.so"), 0);
  assert_int_equal(plugin_index(&p, "dyng_cuda11.so"), 1);
  probe_free(&p);
  /* No match for a CUDA 13 driver among 11 and 12: the newest older. */
  dir = folder("plugins");
  install(dir, "fakeplugin11", "dyng_cuda11.so");
  install(dir, "fakeplugin12", "dyng_cuda12.so");
  const char *env13[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  p = run(env13, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda12");
  assert_string_equal(plugin_field(&p, "dyng_cuda11.so", "state"), "available");
  probe_free(&p);
}

/* The CUDA 12 line alone (dyng_cuda12.so, cuda/README.md) on a CUDA 13
** driver: a CUDA 12 runtime runs on a newer driver, so it is selected,
** started and answers; reporting names the driver's CUDA 13. */
static void test_cuda12_plugin_alone_runs_on_a_cuda13_driver(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin12", "dyng_cuda12.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  const char *none[] = {NULL};
  probe p = run(env, none);
  assert_string_equal(str_at(&p, "driver.cuda_version"), "13000");
  assert_string_equal(str_at(&p, "backend.name"), "cuda12");
  contains(str_at(&p, "backend.reason"), "dyng_cuda12.so selected, started by the first graph");
  assert_string_equal(plugin_field(&p, "dyng_cuda12.so", "state"), "selected");
  lacks(p.calls, "init ");
  probe_free(&p);
  p = run(env, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda12");
  assert_string_equal(str_at(&p, "graphs.0.residency"), "device");
  assert_string_equal(plugin_field(&p, "dyng_cuda12.so", "started"), "true");
  contains(plugin_field(&p, "dyng_cuda12.so", "reason"), "started on NVIDIA H200");
  contains(p.calls, "init 12 0");
  contains(p.out, "1:0.0 2:1.0 3:3.0 4:4.0");
  assert_string_equal(p.err, "");
  probe_free(&p);
}

static void test_foreign_plugins_are_never_used(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin_abi", "dyng_cuda13.so");
  install(dir, "fakeplugin_version", "dyng_cuda15.so");
  install(dir, "fakeplugin_noentry", "dyng_cuda16.so");
  install(dir, "fakeplugin11", "dyng_cuda10.so"); /* built with 11 */
  char broken[700];
  snprintf(broken, sizeof broken, "%s/dyng_cuda9.so", dir);
  write_file(broken, "not a shared object\n");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DRIVER=16000", "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  probe p = run(env, k_graph);
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"), "built for backend ABI");
  contains(plugin_field(&p, "dyng_cuda15.so", "reason"), "built for dyng 0.0.0-other");
  contains(plugin_field(&p, "dyng_cuda16.so", "reason"), "not a dyng plugin: no dyng_plugin_entry");
  contains(plugin_field(&p, "dyng_cuda10.so", "reason"), "its name says CUDA 10 but it was built with CUDA 11");
  contains(plugin_field(&p, "dyng_cuda9.so", "reason"), "cannot be loaded");
  for (int i = 0; i < 5; i++) {
    char path[64];
    snprintf(path, sizeof path, "plugins.%d.state", i);
    assert_string_equal(str_at(&p, path), "unusable");
  }
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  contains(p.out, "1:0.0 2:1.0 3:3.0 4:4.0");
  /* One warning, naming every plugin and its reason. */
  contains(p.err, "LOG 28: dyng: no usable GPU plugin, using the CPU:");
  contains(p.err, "dyng_cuda13.so (ABI 999)");
  contains(p.err, "dyng_cuda15.so (dyng 0.0.0-other)");
  contains(p.err, "dyng_cuda16.so (no entry point)");
  contains(p.err, "dyng_cuda10.so (built with CUDA 11)");
  contains(p.err, "dyng_cuda9.so (not loadable)");
  const char *second = strstr(strstr(p.err, "no usable GPU") + 1, "no usable GPU");
  assert_null(second);
  lacks(p.calls, "init ");
  probe_free(&p);
}

static void test_a_plugin_that_fails_to_start_passes_to_the_next(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin12", "dyng_cuda12.so");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_FAIL_INIT=13", NULL};
  probe p = run(env, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda12");
  assert_string_equal(plugin_field(&p, "dyng_cuda13.so", "state"), "unusable");
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"), "failed to start: cudaSetDevice: fake failure of CUDA 13");
  assert_string_equal(plugin_field(&p, "dyng_cuda12.so", "state"), "selected");
  contains(p.calls, "init 13 0\ninit 12 0");
  assert_string_equal(p.err, "");
  probe_free(&p);
  /* When the only one fails: the CPU, with the reason and the warning. */
  dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  p = run(env, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  contains(str_at(&p, "graphs.0.backend_reason"), "fake failure of CUDA 13");
  contains(p.err, "dyng_cuda13.so (failed to start)");
  probe_free(&p);
}

static void test_devices_follow_visibility_and_capability(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *two = "FAKE_CUDA_DEVICES=Tesla V100:70:16384;NVIDIA H200:90:143771";
  /* A 7.0 device is listed but not used: the H200 (ordinal 1) is. */
  const char *env[] = {ld, pp, two, NULL};
  probe p = run(env, k_graph);
  assert_string_equal(str_at(&p, "devices.0.usable"), "false");
  assert_string_equal(str_at(&p, "devices.1.chosen"), "true");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  contains(p.calls, "init 13 1");
  probe_free(&p);
  /* Only the V100 visible: nothing usable, said why. */
  const char *v100[] = {ld, pp, two, "CUDA_VISIBLE_DEVICES=0", NULL};
  p = run(v100, k_graph);
  assert_int_equal(len_at(&p, "devices"), 1);
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"),
           "no device of compute capability 7.5 or newer (Tesla V100 is 7.0)");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  contains(p.err, "no usable GPU plugin");
  probe_free(&p);
  /* By UUID, the H200 becomes ordinal 0. */
  const char *by_uuid[] = {ld, pp, two, "CUDA_VISIBLE_DEVICES=GPU-fake-1", NULL};
  p = run(by_uuid, k_graph);
  assert_int_equal(len_at(&p, "devices"), 1);
  assert_string_equal(str_at(&p, "devices.0.name"), "NVIDIA H200");
  contains(p.calls, "init 13 0");
  probe_free(&p);
  /* Hidden entirely. */
  const char *hidden[] = {ld, pp, two, "CUDA_VISIBLE_DEVICES=", NULL};
  p = run(hidden, k_graph);
  assert_int_equal(len_at(&p, "devices"), 0);
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"), "no visible CUDA device (CUDA_VISIBLE_DEVICES=)");
  probe_free(&p);
}

static void test_without_nvml_devices_come_from_cuinit(void **state) {
  (void)state;
  const char *lib = driver_folder("lib-no-nvml", 0), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA L4:89:23034", NULL};
  probe p = run(env, k_graph);
  assert_string_equal(str_at(&p, "discovery.devices_from"), "cuInit");
  contains(str_at(&p, "discovery.devices_note"), "cannot use CUDA");
  assert_string_equal(str_at(&p, "devices.0.name"), "NVIDIA L4");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  contains(p.calls, "cuInit");
  probe_free(&p);
}

static void test_without_a_driver_plugins_say_so(void **state) {
  (void)state;
  const char *lib = folder("bad-driver"), *dir = folder("plugins");
  char bogus[700];
  snprintf(bogus, sizeof bogus, "%s/libcuda.so.1", lib);
  write_file(bogus, "not a driver\n");
  snprintf(bogus, sizeof bogus, "%s/libnvidia-ml.so.1", lib);
  write_file(bogus, "not NVML\n");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, NULL};
  probe p = run(env, k_graph);
  assert_string_equal(str_at(&p, "driver.cuda_version"), "null");
  contains(str_at(&p, "driver.note"), "no NVIDIA driver");
  contains(plugin_field(&p, "dyng_cuda13.so", "reason"), "no NVIDIA driver");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  contains(p.err, "no usable GPU plugin");
  probe_free(&p);
}

static void test_cpu_only_and_require_cuda(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  /* DYNG_CPU_ONLY: nothing is looked at. */
  const char *cpu[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "DYNG_CPU_ONLY=yes", NULL};
  probe p = run(cpu, k_graph);
  assert_string_equal(str_at(&p, "backend.name"), "cpu");
  assert_string_equal(str_at(&p, "backend.reason"), "DYNG_CPU_ONLY is set");
  assert_string_equal(str_at(&p, "discovery.cpu_only"), "true");
  assert_int_equal(len_at(&p, "plugins"), 0);
  assert_string_equal(p.calls, "");
  assert_string_equal(p.err, "");
  probe_free(&p);
  /* A value that is not a boolean is ignored, with a warning. */
  const char *odd[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "DYNG_CPU_ONLY=perhaps", NULL};
  p = run(odd, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  contains(p.err, "DYNG_CPU_ONLY='perhaps' is not a boolean");
  probe_free(&p);
  /* DYNG_REQUIRE_CUDA: a graph that cannot run on CUDA is an error... */
  const char *req_none[] = {ld, pp, "DYNG_REQUIRE_CUDA=1", NULL};
  p = run(req_none, k_graph);
  contains(p.out, "ERROR: dyng: graph 'g': CUDA was required (DYNG_REQUIRE_CUDA) but cannot be used: ");
  contains(p.out, "no visible CUDA device");
  assert_string_equal(str_at(&p, "backend.name"), "none");
  probe_free(&p);
  /* ...and fine when it can. */
  const char *req[] = {ld, pp, "DYNG_REQUIRE_CUDA=1", "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  p = run(req, k_graph);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  lacks(p.out, "ERROR");
  probe_free(&p);
}

/* A GPU that runs out of memory after the graph is on it (a second graph
** took the memory, say): the graph goes on on the CPU, with its answer and
** the reason; unless CUDA is required, where it is an error naming it. */
static void test_out_of_device_memory_moves_the_graph_to_the_cpu(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_NO_MEMORY=13", NULL};
  const char *sql[] = {k_graph[0], k_graph[1],
                       "INSERT INTO e VALUES (4, 5, 2)",
                       "SELECT group_concat(node || ':' || dist, ' ') FROM dyng_sssp('g', 1)", NULL};
  probe p = run(env, sql);
  contains(p.out, "1:0.0 2:1.0 3:3.0 4:4.0\n");
  contains(p.out, "1:0.0 2:1.0 3:3.0 4:4.0 5:6.0\n");
  lacks(p.out, "ERROR");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  assert_string_equal(str_at(&p, "graphs.0.residency"), "host");
  assert_string_equal(str_at(&p, "graphs.0.backend_reason"),
                      "the cuda13 backend ran out of device memory computing a shortest-path tree "
                      "(cudaMalloc: out of memory (fake)); computed on the CPU");
  contains(p.err, "graph 'g': the cuda13 backend ran out of device memory");
  probe_free(&p);
  const char *req[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_NO_MEMORY=13",
                       "DYNG_REQUIRE_CUDA=1", NULL};
  p = run(req, k_graph);
  contains(p.out, "ERROR: dyng: graph 'g': the cuda13 backend ran out of device memory computing a "
                  "shortest-path tree (cudaMalloc: out of memory (fake))");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  probe_free(&p);
}

/* A chain of 5,001 nodes (paths longer than the first 4,096 rows a path
** query makes room for), a few triangles, two objectives; `g` on the
** plugin, `gc` on the CPU. */
static const char *const k_kept_graph =
    "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL, v REAL);"
    "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 4999) "
    "INSERT INTO e SELECT x, x + 1, 1 + x % 3, 1 + x % 5 FROM i;"
    "INSERT INTO e VALUES (0, 2, 5, 1), (10, 12, 1, 3), (30, 32, 2, 2), (32, 30, 1, 9), (40, 43, 1, 1);"
    "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='w,v', directed=1);"
    "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='w,v', directed=1, backend=cpu)";

/* One line per comparison of g with gc: "same <what>" or "DIFF <what>". */
#define KEPT_SAME(what, q)                                                                              \
  "SELECT CASE WHEN (" q ") IS (" q ") THEN 'same " what "' ELSE 'DIFF " what "' END"
static const char *const k_kept_checks[] = {
    /* One row of a tree the backend keeps, then a path through it, then
    ** every row. */
    "SELECT CASE WHEN (SELECT dist || ':' || parent || ':' || edge FROM dyng_sssp('g', 0, 'w') WHERE node = 4000) IS "
    "(SELECT dist || ':' || parent || ':' || edge FROM dyng_sssp('gc', 0, 'w') WHERE node = 4000) "
    "THEN 'same point' ELSE 'DIFF point' END",
    "SELECT CASE WHEN (SELECT count(*) || group_concat(node || ':' || ifnull(edge, '') || ':' || agg_cost, ' ') "
    "FROM dyng_path('g', 0, 5000, 'v')) IS (SELECT count(*) || group_concat(node || ':' || ifnull(edge, '') || ':' "
    "|| agg_cost, ' ') FROM dyng_path('gc', 0, 5000, 'v')) THEN 'same path' ELSE 'DIFF path' END",
    /* (Ties in a listing come in no set order: by node.) */
    "SELECT CASE WHEN (SELECT group_concat(node || ':' || dist || ':' || ifnull(parent, ''), ' ') "
    "FROM (SELECT * FROM dyng_sssp('g', 0, 'w') ORDER BY node)) IS (SELECT group_concat(node || ':' || dist || ':' "
    "|| ifnull(parent, ''), ' ') FROM (SELECT * FROM dyng_sssp('gc', 0, 'w') ORDER BY node)) "
    "THEN 'same listing' ELSE 'DIFF listing' END",
    "SELECT CASE WHEN (SELECT count(*) || group_concat(node || ':' || ifnull(edge, '') || ':' || agg_costs, ' ') "
    "FROM dyng_mosp('g', 0, 5000)) IS (SELECT count(*) || group_concat(node || ':' || ifnull(edge, '') || ':' || "
    "agg_costs, ' ') FROM dyng_mosp('gc', 0, 5000)) THEN 'same mosp' ELSE 'DIFF mosp' END",
    "SELECT CASE WHEN dyng_cycle_count('g', 3) = dyng_cycle_count('gc', 3) AND dyng_cycle_count('g', 3) > 0 "
    "AND dyng_cycle_count('g', 4, 'directed') = dyng_cycle_count('gc', 4, 'directed') "
    "THEN 'same cycles' ELSE 'DIFF cycles' END",
    NULL};

/* Runs k_kept_graph, the checks, a batch (an insert, a delete, an update
** on the paths), the checks again; asserts every check came out the same
** (ten lines). */
static probe run_kept(const char *const *env) {
  const char *sql[16];
  int n = 0;
  sql[n++] = k_kept_graph;
  for (int i = 0; k_kept_checks[i]; i++) sql[n++] = k_kept_checks[i];
  sql[n++] = "INSERT INTO e VALUES (2, 4000, 1, 1); DELETE FROM e WHERE src = 100 AND dst = 101; "
             "UPDATE e SET v = 0.5 WHERE src = 4500; INSERT INTO e VALUES (100, 102, 9, 9)";
  for (int i = 0; k_kept_checks[i]; i++) sql[n++] = k_kept_checks[i];
  sql[n] = NULL;
  probe p = run(env, sql);
  lacks(p.out, "DIFF");
  lacks(p.out, "ERROR");
  const char *at = p.out;
  int same = 0;
  while ((at = strstr(at, "same ")) != NULL) same++, at++;
  if (same != 10) fail_msg("%d checks of 10 came out the same:\n%s", same, p.out);
  return p;
}

/* A backend that keeps its trees (as the CUDA plugin does, in device
** memory) and hands the host rows only on request: every answer that reads
** a tree asks for the rows it needs (one row, a path longer than the first
** room, every row), through batches; its cycle counts and MOSP path too. */
static void test_trees_the_backend_keeps(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13", NULL};
  probe p = run_kept(env);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.runs_on.shortest_paths"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.runs_on.mosp_path"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.runs_on.cycle_counts"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.runs_on.pareto"), "cpu");
  assert_string_equal(p.err, "");
  probe_free(&p);
  /* The device fills at the MOSP path, with trees kept there: the graph
  ** moves to the CPU and brings their rows. */
  const char *full[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13",
                        "FAKE_PLUGIN_MOSP_NO_MEMORY=13", NULL};
  p = run_kept(full);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  contains(str_at(&p, "graphs.0.backend_reason"),
           "the cuda13 backend ran out of device memory finding an ensemble path (cudaMalloc (ensemble graph): "
           "out of memory (fake)); computed on the CPU");
  probe_free(&p);
  /* And when the rows cannot come over either, the kept trees are computed
  ** again on the CPU. */
  const char *lost[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13",
                        "FAKE_PLUGIN_MOSP_NO_MEMORY=13", "FAKE_PLUGIN_FETCH_FAILS=13", NULL};
  const char *sql[] = {k_kept_graph, k_kept_checks[3], k_kept_checks[0], k_kept_checks[2],
                       "INSERT INTO e VALUES (2, 4000, 1, 1)", k_kept_checks[3], k_kept_checks[1], NULL};
  p = run(lost, sql);
  lacks(p.out, "DIFF");
  lacks(p.out, "ERROR");
  contains(p.out, "same mosp\nsame point\nsame listing\nsame mosp\nsame path\n");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  probe_free(&p);
}

/* Counts whose update runs past its deadline: the first batch tries the
** update and counts again; batches at least as large then count again at
** once, a smaller one tries again; the counts stay right throughout. */
static void test_counts_skip_updates_that_gave_up(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13",
                       "FAKE_PLUGIN_SLOW_DELTA=13", NULL};
#define SAME_COUNT "SELECT CASE WHEN dyng_cycle_count('g', 3) = dyng_cycle_count('gc', 3) THEN 'same' ELSE 'DIFF' END"
  const char *sql[] = {
      "CREATE TABLE e(src INTEGER, dst INTEGER);"
      "INSERT INTO e VALUES (1,2),(2,3),(3,1),(3,4),(4,1),(4,5),(5,6),(6,4);"
      "CREATE VIRTUAL TABLE g USING dyng(edges=e);"
      "CREATE VIRTUAL TABLE gc USING dyng(edges=e, backend=cpu)",
      SAME_COUNT,
      /* Two changes: tried, gave up, counted again. */
      "INSERT INTO e VALUES (1, 5), (2, 4)", SAME_COUNT,
      /* Two and three changes: counted again at once. */
      "INSERT INTO e VALUES (1, 6), (2, 6)", SAME_COUNT, "INSERT INTO e VALUES (3, 6), (2, 5), (3, 5)", SAME_COUNT,
      /* One change: smaller, so tried again. */
      "DELETE FROM e WHERE src = 1 AND dst = 5", SAME_COUNT, NULL};
#undef SAME_COUNT
  probe p = run(env, sql);
  lacks(p.out, "DIFF");
  lacks(p.out, "ERROR");
  assert_string_equal(str_at(&p, "graphs.0.runs_on.cycle_counts"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.cycle_counts.0.recounts"), "4");
  assert_string_equal(str_at(&p, "graphs.0.cycle_counts.0.updates"), "0");
  /* The updates asked for: after the first batch and the fourth only. */
  const char *first = strstr(p.calls, "delta 3\n");
  assert_non_null(first);
  const char *second = strstr(first + 1, "delta 3\n");
  assert_non_null(second);
  assert_null(strstr(second + 1, "delta 3\n"));
  probe_free(&p);
}

/* Each engine code a backend can return reaches SQL as its own message
** (engine/errcode.h, ext/error.c): a count past 64 bits, a path longer
** than the room made for it, a graph past a size limit; a repair that
** gives up is recomputed, with the same answers. */
static void test_engine_codes_reach_sql_as_their_own_message(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  static const struct {
    const char *forced, *sql, *message;
  } cases[] = {
      {"FAKE_PLUGIN_RETURN=13:cycles_count:-9", "SELECT dyng_cycle_count('g', 3)",
       "ERROR: dyng_cycle_count: graph 'g': more 3-cycles than a 64-bit count holds\n"},
      /* (A first route from a source is found on the host; the second
      ** from it gets the whole tree, kept by the backend.) */
      {"FAKE_PLUGIN_RETURN=13:tree_path:-11",
       "SELECT count(*) FROM dyng_path('g', 0, 10, 'w'); SELECT count(*) FROM dyng_path('g', 0, 5000, 'w')",
       "ERROR: dyng_path: graph 'g': an answer did not fit the room made for it\n"},
      {"FAKE_PLUGIN_RETURN=13:mosp_path:-11", "SELECT count(*) FROM dyng_mosp('g', 0, 5000)",
       "ERROR: dyng_mosp: graph 'g': an answer did not fit the room made for it\n"},
      {"FAKE_PLUGIN_RETURN=13:sssp:-5", "SELECT count(*) FROM dyng_sssp('g', 0, 'w')",
       "ERROR: dyng_sssp: graph 'g': the graph is too large (at most 2^31 - 1 vertices and 2^31 - 1 "
       "edges)\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13", cases[i].forced,
                         NULL};
    const char *sql[] = {k_kept_graph, cases[i].sql, NULL};
    probe p = run(env, sql);
    contains(p.out, cases[i].message);
    probe_free(&p);
  }
  /* Every update of a kept tree gives up: each is computed again. */
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13",
                       "FAKE_PLUGIN_RETURN=13:sssp_update:-10", NULL};
  probe p = run_kept(env);
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.0.trees.0.updates"), "0");
  assert_string_not_equal(str_at(&p, "graphs.0.trees.0.recomputes"), "0");
  lacks(p.out, "ERROR");
  probe_free(&p);
}

/* A cost matrix large enough for the device goes to the backend's matrix
** entry (its answers those of the CPU graph of the same table); out of
** device memory, the host computes it; a failure is a clear error; a
** small one stays on the host. */
static void test_matrix_goes_to_the_backend(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  static const char *const setup =
      "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 59999) "
      "INSERT INTO e SELECT x, x + 1, x % 4 FROM i;"
      "INSERT INTO e SELECT src + 3, src, 1 + src % 7 FROM e WHERE src % 97 = 0;"
      "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w, directed=1);"
      "CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights=w, directed=1, backend=cpu)";
#define MATRIX_OF(graph, srcs) \
  "SELECT count(*) || ' ' || sum(dist) || ' ' || group_concat(source || '>' || target, ',') FROM dyng_matrix('" \
  graph "', '" srcs "', '[3, 500, 59000, 60000, 7, 123456789]')"
  static const char *const big = "[0, 300, 1000, 4000, 44000, 59999, 300]", *const small = "[0, 300]";
  char q_big[400], q_big_cpu[400], q_small[400], q_small_cpu[400];
  snprintf(q_big, sizeof q_big, MATRIX_OF("g", "%s"), big);
  snprintf(q_big_cpu, sizeof q_big_cpu, MATRIX_OF("gc", "%s"), big);
  snprintf(q_small, sizeof q_small, MATRIX_OF("g", "%s"), small);
  snprintf(q_small_cpu, sizeof q_small_cpu, MATRIX_OF("gc", "%s"), small);
#undef MATRIX_OF
  char same[1000], same_small[1000];
  snprintf(same, sizeof same, "SELECT CASE WHEN (%s) = (%s) THEN 'same matrix' ELSE 'DIFF matrix' END", q_big,
           q_big_cpu);
  snprintf(same_small, sizeof same_small, "SELECT CASE WHEN (%s) = (%s) THEN 'same small' ELSE 'DIFF small' END",
           q_small, q_small_cpu);
  static const char *const forced[] = {NULL, "FAKE_PLUGIN_RETURN=13:matrix:-1"};
  for (int f = 0; f < 2; f++) {
    const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13", forced[f], NULL};
    const char *sql[] = {setup, same, same_small, NULL};
    probe p = run(env, sql);
    contains(p.out, "same matrix\nsame small\n");
    lacks(p.out, "ERROR");
    lacks(p.out, "DIFF");
    assert_string_equal(str_at(&p, "graphs.0.backend"), "cuda13");
    assert_string_equal(str_at(&p, "graphs.0.runs_on.matrix"), "cuda13");
    assert_string_equal(str_at(&p, "graphs.1.runs_on.matrix"), "cpu");
    /* The big one went to the backend (a block of its 6 distinct sources), the
    ** small one not. */
    contains(p.calls, "matrix 6\n");
    lacks(p.calls, "matrix 2\n");
    assert_string_equal(str_at(&p, "graphs.0.matrices.on_backend"), f ? "0" : "1");
    assert_string_equal(str_at(&p, "graphs.0.matrices.on_host"), f ? "2" : "1");
    probe_free(&p);
  }
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", "FAKE_PLUGIN_KEEP=13",
                       "FAKE_PLUGIN_RETURN=13:matrix:-7", NULL};
  const char *sql[] = {setup, q_big, same_small, NULL};
  probe p = run(env, sql);
  contains(p.out, "ERROR: dyng_matrix: graph 'g': backend failure\n");
  /* The small matrix, on the host, still answers. */
  contains(p.out, "same small\n");
  probe_free(&p);
}

static void test_connection_and_graph_preferences(void **state) {
  (void)state;
  const char *lib = driver_folder("lib", 1), *dir = folder("plugins");
  install(dir, "fakeplugin13", "dyng_cuda13.so");
  char ld[600], pp[600];
  env_paths(ld, pp, lib, dir);
  const char *env[] = {ld, pp, "FAKE_CUDA_DEVICES=NVIDIA H200:90:143771", NULL};
  const char *sql[] = {
      "CREATE TABLE e(src INTEGER, dst INTEGER, w REAL);"
      "INSERT INTO e VALUES (1,2,1),(2,3,2),(1,3,5),(3,4,1);"
      "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w);"
      "CREATE VIRTUAL TABLE h USING dyng(edges=e, weights=w, backend=cuda)",
      "SELECT json_extract(dyng_config(), '$.graphs[0].backend')",
      /* The connection moves to the CPU: g follows at its next use, h not. */
      "SELECT dyng_config('backend', 'cpu') IS NOT NULL",
      "SELECT group_concat(node || ':' || dist, ' ') FROM dyng_sssp('g', 1)",
      "SELECT group_concat(node || ':' || dist, ' ') FROM dyng_sssp('h', 1)",
      "SELECT dyng_config('backend', 'sometimes')",
      "CREATE VIRTUAL TABLE k USING dyng(edges=e, backend=tpu)",
      NULL};
  probe p = run(env, sql);
  contains(p.out, "cuda13\n1\n1:0.0 2:1.0 3:3.0 4:4.0\n1:0.0 2:1.0 3:3.0 4:4.0\n");
  contains(p.out, "ERROR: dyng_config: backend must be 'auto', 'cpu' or 'cuda'");
  contains(p.out, "ERROR: dyng: option backend='tpu' of graph 'k' must be auto, cpu or cuda");
  assert_string_equal(str_at(&p, "backend.preference"), "cpu");
  assert_string_equal(str_at(&p, "backend.name"), "cpu");
  assert_string_equal(str_at(&p, "graphs.0.name"), "g");
  assert_string_equal(str_at(&p, "graphs.0.backend"), "cpu");
  assert_string_equal(str_at(&p, "graphs.0.backend_option"), "null");
  assert_string_equal(str_at(&p, "graphs.1.backend"), "cuda13");
  assert_string_equal(str_at(&p, "graphs.1.backend_option"), "cuda");
  probe_free(&p);
}

/* ---- setup -------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  const char *build = getenv("DYNG_BUILDDIR");
  assert_non_null(build);
  snprintf(g_fakes, sizeof g_fakes, "%s/tests/fakes", build);
  snprintf(g_root, sizeof g_root, "/tmp/dyng-backends-XXXXXX");
  assert_non_null(mkdtemp(g_root));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_plugin_is_silent_and_uses_the_cpu),
      cmocka_unit_test(test_matching_plugin_is_chosen_on_first_use),
      cmocka_unit_test(test_older_driver_takes_the_newest_plugin_it_can_run),
      cmocka_unit_test(test_cuda12_plugin_alone_runs_on_a_cuda13_driver),
      cmocka_unit_test(test_foreign_plugins_are_never_used),
      cmocka_unit_test(test_a_plugin_that_fails_to_start_passes_to_the_next),
      cmocka_unit_test(test_devices_follow_visibility_and_capability),
      cmocka_unit_test(test_without_nvml_devices_come_from_cuinit),
      cmocka_unit_test(test_without_a_driver_plugins_say_so),
      cmocka_unit_test(test_cpu_only_and_require_cuda),
      cmocka_unit_test(test_out_of_device_memory_moves_the_graph_to_the_cpu),
      cmocka_unit_test(test_trees_the_backend_keeps),
      cmocka_unit_test(test_counts_skip_updates_that_gave_up),
      cmocka_unit_test(test_engine_codes_reach_sql_as_their_own_message),
      cmocka_unit_test(test_matrix_goes_to_the_backend),
      cmocka_unit_test(test_connection_and_graph_preferences),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
