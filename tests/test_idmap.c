/*
** tests/test_idmap.c: unit tests of the int64 -> uint32 hash map
** (engine/idmap.h).
**
** How it works: the simple cases put, get, overwrite and remove a few keys,
** extreme values included.  The larger ones compare the map with a naive
** model, a flat array indexed by the position of a key in a fixed pool of
** candidate keys, through long random runs of puts and removes.  Pools mix
** dense runs of keys (which the map keeps in its direct window) with sparse
** ones (its hash table), so that window growth in both directions, hash
** growth, clustering and backward-shift deletion are all exercised, and so
** are keys that entered the hash table before the window grew over them.
** Values stay below UINT32_MAX, as idmap.h requires.
*/
#include "test_util.h"

#include "engine/error.h"
#include "engine/idmap.h"

#include <string.h>

/* `n` distinct keys: i times an odd constant (a bijection of 2^64), with the
** first few replaced by the extreme values every map must treat as ordinary
** keys, and the pool checked to be duplicate-free. */
static int64_t *key_pool(size_t n) {
  static const int64_t special[] = {INT64_MIN, INT64_MAX, -1, 1, INT64_MIN + 1, INT64_MAX - 1};
  const size_t n_special = sizeof special / sizeof special[0];
  int64_t *k = malloc(n * sizeof *k);
  assert_non_null(k);
  for (size_t i = 0; i < n; i++) k[i] = (int64_t)((uint64_t)i * 0xd6e8feb86659fd93ULL);
  for (size_t s = 0; s < n_special && s + 1 < n; s++) k[s + 1] = special[s];
  for (size_t s = 0; s <= n_special && s < n; s++)
    for (size_t i = 0; i < n; i++)
      if (i != s) assert_true(k[i] != k[s]);
  return k;
}

static void test_new_map_is_empty(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  assert_int_equal(dyng_idmap_size(m), 0);
  uint32_t v = 12345;
  /* Freshly zeroed cells must not make key 0 look present. */
  assert_int_equal(dyng_idmap_get(m, 0, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_get(m, INT64_MIN, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_get(m, 42, &v), DYNG_ENOTFOUND);
  assert_int_equal(v, 12345);
  assert_int_equal(dyng_idmap_remove(m, 0), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_size(m), 0);
  dyng_idmap_free(m);
}

static void test_free_accepts_null(void **state) {
  (void)state;
  dyng_idmap_free(NULL);
}

static void test_put_then_get_returns_value(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(4);
  assert_non_null(m);
  assert_int_equal(dyng_idmap_put(m, 17, 3), DYNG_OK);
  assert_int_equal(dyng_idmap_put(m, -17, 4), DYNG_OK);
  uint32_t v = 0;
  assert_int_equal(dyng_idmap_get(m, 17, &v), DYNG_OK);
  assert_int_equal(v, 3);
  assert_int_equal(dyng_idmap_get(m, -17, &v), DYNG_OK);
  assert_int_equal(v, 4);
  assert_int_equal(dyng_idmap_get(m, 18, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_size(m), 2);
  dyng_idmap_free(m);
}

static void test_put_of_existing_key_overwrites_value(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  assert_int_equal(dyng_idmap_put(m, 99, 1), DYNG_OK);
  assert_int_equal(dyng_idmap_put(m, 100, 2), DYNG_OK);
  assert_int_equal(dyng_idmap_put(m, 99, 7), DYNG_OK);
  uint32_t v = 0;
  assert_int_equal(dyng_idmap_get(m, 99, &v), DYNG_OK);
  assert_int_equal(v, 7);
  assert_int_equal(dyng_idmap_get(m, 100, &v), DYNG_OK);
  assert_int_equal(v, 2);
  assert_int_equal(dyng_idmap_size(m), 2);
  dyng_idmap_free(m);
}

static void test_get_or_put_inserts_only_new_keys(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  uint32_t v = 0;
  int inserted = -1;
  assert_int_equal(dyng_idmap_get_or_put(m, 5, 50, &v, &inserted), DYNG_OK);
  assert_int_equal(inserted, 1);
  assert_int_equal(v, 50);
  assert_int_equal(dyng_idmap_get_or_put(m, 5, 60, &v, &inserted), DYNG_OK);
  assert_int_equal(inserted, 0);
  assert_int_equal(v, 50);
  assert_int_equal(dyng_idmap_get(m, 5, &v), DYNG_OK);
  assert_int_equal(v, 50);
  assert_int_equal(dyng_idmap_size(m), 1);
  dyng_idmap_free(m);
}

static void test_remove_deletes_only_that_key(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  for (int64_t k = 0; k < 10; k++) assert_int_equal(dyng_idmap_put(m, k, (uint32_t)(k + 100)), DYNG_OK);
  assert_int_equal(dyng_idmap_remove(m, 4), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), 9);
  assert_int_equal(dyng_idmap_remove(m, 4), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_size(m), 9);
  uint32_t v;
  assert_int_equal(dyng_idmap_get(m, 4, &v), DYNG_ENOTFOUND);
  for (int64_t k = 0; k < 10; k++) {
    if (k == 4) continue;
    assert_int_equal(dyng_idmap_get(m, k, &v), DYNG_OK);
    assert_int_equal(v, (uint32_t)(k + 100));
  }
  /* A removed key can come back with a new value. */
  assert_int_equal(dyng_idmap_put(m, 4, 7), DYNG_OK);
  assert_int_equal(dyng_idmap_get(m, 4, &v), DYNG_OK);
  assert_int_equal(v, 7);
  assert_int_equal(dyng_idmap_size(m), 10);
  dyng_idmap_free(m);
}

static void test_extreme_keys_and_values_are_ordinary(void **state) {
  (void)state;
  static const int64_t keys[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1};
  static const uint32_t values[] = {0, UINT32_MAX - 1, 1, UINT32_MAX - 2, 0x80000000u, 2, 3};
  const size_t n = sizeof keys / sizeof keys[0];
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  for (size_t i = 0; i < n; i++) assert_int_equal(dyng_idmap_put(m, keys[i], values[i]), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), n);
  for (size_t i = 0; i < n; i++) {
    uint32_t v = 0xdeadbeef;
    assert_int_equal(dyng_idmap_get(m, keys[i], &v), DYNG_OK);
    assert_int_equal(v, values[i]);
  }
  /* Remove them one at a time; the rest stay. */
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(dyng_idmap_remove(m, keys[i]), DYNG_OK);
    assert_int_equal(dyng_idmap_size(m), n - i - 1);
    for (size_t j = 0; j < n; j++) {
      uint32_t v;
      int rc = dyng_idmap_get(m, keys[j], &v);
      if (j <= i) {
        assert_int_equal(rc, DYNG_ENOTFOUND);
      } else {
        assert_int_equal(rc, DYNG_OK);
        assert_int_equal(v, values[j]);
      }
    }
  }
  dyng_idmap_free(m);
}

/* Many keys from an empty map: the table doubles again and again, and every
** key must survive each rehash. */
static void test_growth_through_many_rehashes_keeps_every_key(void **state) {
  (void)state;
  const size_t n = 60000;
  int64_t *keys = key_pool(n);
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  size_t bytes0 = dyng_idmap_bytes(m);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(dyng_idmap_put(m, keys[i], (uint32_t)(i * 3u)), DYNG_OK);
    assert_int_equal(dyng_idmap_size(m), i + 1);
    /* Spot-check earlier keys while the table is still small and growing. */
    if ((i & (i + 1)) == 0)
      for (size_t j = 0; j <= i; j++) {
        uint32_t v;
        assert_int_equal(dyng_idmap_get(m, keys[j], &v), DYNG_OK);
        assert_int_equal(v, (uint32_t)(j * 3u));
      }
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    assert_int_equal(dyng_idmap_get(m, keys[i], &v), DYNG_OK);
    assert_int_equal(v, (uint32_t)(i * 3u));
  }
  assert_true(dyng_idmap_bytes(m) > bytes0);
  dyng_idmap_free(m);

  /* Sequential keys, a classic weak spot of poor hash functions. */
  m = dyng_idmap_new(0);
  assert_non_null(m);
  for (int64_t k = -5000; k < 25000; k++) assert_int_equal(dyng_idmap_put(m, k, (uint32_t)(k + 5000)), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), 30000);
  for (int64_t k = -5000; k < 25000; k++) {
    uint32_t v;
    assert_int_equal(dyng_idmap_get(m, k, &v), DYNG_OK);
    assert_int_equal(v, (uint32_t)(k + 5000));
  }
  uint32_t v;
  assert_int_equal(dyng_idmap_get(m, 25000, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_get(m, -5001, &v), DYNG_ENOTFOUND);
  dyng_idmap_free(m);
  free(keys);
}

/* Small, nearly full hash tables have long clusters that wrap around the
** end; removing any key must leave every other key findable (the backward
** shift must move exactly the keys whose probe path crossed the hole).  The
** first key of a map places its dense window, so it is a decoy here; the
** keys under test lie far from it and from each other, in the hash table. */
static void test_removal_keeps_clustered_keys_findable(void **state) {
  (void)state;
  test_rng r;
  test_rng_for(&r, 1);
  enum { MAX_KEYS = 11 }; /* at most 70% of the 16 cells of a new map */
  for (int trial = 0; trial < 3000; trial++) {
    int64_t keys[MAX_KEYS];
    int present[MAX_KEYS];
    int n_keys = 6 + (int)test_rng_below(&r, MAX_KEYS - 5);
    dyng_idmap *m = dyng_idmap_new(0);
    assert_non_null(m);
    assert_int_equal(dyng_idmap_put(m, 0, 999), DYNG_OK); /* the decoy */
    for (int i = 0; i < n_keys; i++) {
      int fresh;
      do {
        /* Arbitrary keys and strided ones (multiples of 2^32, both signs). */
        if (test_rng_below(&r, 2)) keys[i] = (int64_t)test_rng_next(&r);
        else keys[i] = (int64_t)((test_rng_below(&r, 128) + 1) << 32) * (test_rng_below(&r, 2) ? 1 : -1);
        fresh = keys[i] < -100000 || keys[i] > 100000;
        for (int j = 0; j < i; j++) fresh &= keys[j] != keys[i];
      } while (!fresh);
      assert_int_equal(dyng_idmap_put(m, keys[i], (uint32_t)i), DYNG_OK);
      present[i] = 1;
    }
    for (int step = 0; step < 2 * n_keys; step++) {
      int i = (int)test_rng_below(&r, n_keys);
      if (step % 4 == 3 && !present[i]) {
        /* Put a removed key back now and then. */
        assert_int_equal(dyng_idmap_put(m, keys[i], (uint32_t)i), DYNG_OK);
        present[i] = 1;
      } else {
        assert_int_equal(dyng_idmap_remove(m, keys[i]), present[i] ? DYNG_OK : DYNG_ENOTFOUND);
        present[i] = 0;
      }
      size_t n_present = 1;
      for (int j = 0; j < n_keys; j++) {
        uint32_t v;
        int rc = dyng_idmap_get(m, keys[j], &v);
        n_present += present[j] != 0;
        if (!present[j]) {
          assert_int_equal(rc, DYNG_ENOTFOUND);
        } else {
          assert_int_equal(rc, DYNG_OK);
          assert_int_equal(v, (uint32_t)j);
        }
      }
      uint32_t v;
      assert_int_equal(dyng_idmap_get(m, 0, &v), DYNG_OK);
      assert_int_equal(v, 999);
      assert_int_equal(dyng_idmap_size(m), n_present);
    }
    dyng_idmap_free(m);
  }
}

/* Long random runs of put / overwrite / remove / get against the model,
** over a pool of keys; `first` is the key put first (it places the dense
** window). */
static void run_random_model(const int64_t *keys, size_t n_keys, size_t first, uint64_t salt) {
  test_rng r;
  test_rng_for(&r, salt);
  int *present = calloc(n_keys, sizeof *present);
  uint32_t *value = calloc(n_keys, sizeof *value);
  assert_non_null(present);
  assert_non_null(value);
  size_t model_size = 0;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  for (int op = 0; op < 40000; op++) {
    /* Phases that favour puts, then removes, so the map grows and shrinks. */
    int put_percent = ((op / 8000) % 2 == 0) ? 75 : 30;
    size_t i = op == 0 ? first : (size_t)test_rng_below(&r, n_keys);
    uint64_t dice = op == 0 ? 0 : test_rng_below(&r, 100);
    if (dice < (uint64_t)put_percent) {
      uint32_t v = (uint32_t)test_rng_below(&r, UINT32_MAX);
      if (test_rng_below(&r, 2)) {
        assert_int_equal(dyng_idmap_put(m, keys[i], v), DYNG_OK);
        value[i] = v;
      } else {
        uint32_t got = 0;
        int inserted = -1;
        assert_int_equal(dyng_idmap_get_or_put(m, keys[i], v, &got, &inserted), DYNG_OK);
        assert_int_equal(inserted, !present[i]);
        if (!present[i]) value[i] = v;
        assert_int_equal(got, value[i]);
      }
      if (!present[i]) model_size++;
      present[i] = 1;
    } else if (dice < 95) {
      assert_int_equal(dyng_idmap_remove(m, keys[i]), present[i] ? DYNG_OK : DYNG_ENOTFOUND);
      if (present[i]) model_size--;
      present[i] = 0;
    } else {
      uint32_t v;
      int rc = dyng_idmap_get(m, keys[i], &v);
      assert_int_equal(rc, present[i] ? DYNG_OK : DYNG_ENOTFOUND);
      if (present[i]) assert_int_equal(v, value[i]);
    }
    assert_int_equal(dyng_idmap_size(m), model_size);
    if (op % 4000 == 3999)
      for (size_t j = 0; j < n_keys; j++) {
        uint32_t v;
        int rc = dyng_idmap_get(m, keys[j], &v);
        assert_int_equal(rc, present[j] ? DYNG_OK : DYNG_ENOTFOUND);
        if (present[j]) assert_int_equal(v, value[j]);
      }
  }
  dyng_idmap_free(m);
  free(present);
  free(value);
}

/* Sparse keys only: everything but the first lives in the hash table. */
static void test_random_sparse_keys_match_model(void **state) {
  (void)state;
  const size_t n = 3000;
  int64_t *keys = key_pool(n);
  run_random_model(keys, n, 5, 2);
  free(keys);
}

/* A dense run of keys in random order plus sparse keys: the window grows
** down and up, keys that went to the hash table end up inside the window. */
static void test_random_dense_and_sparse_keys_match_model(void **state) {
  (void)state;
  const size_t n_sparse = 1500, n_dense = 3000;
  int64_t *sparse = key_pool(n_sparse);
  int64_t *keys = malloc((n_sparse + n_dense) * sizeof *keys);
  assert_non_null(keys);
  const int64_t base = 1000000;
  for (size_t i = 0; i < n_dense; i++) keys[i] = base - 1500 + (int64_t)i;
  for (size_t i = 0; i < n_sparse; i++) {
    assert_true(sparse[i] < base - 1500 || sparse[i] >= base + 1500);
    keys[n_dense + i] = sparse[i];
  }
  run_random_model(keys, n_sparse + n_dense, n_dense / 2, 3);     /* window first */
  run_random_model(keys, n_sparse + n_dense, n_dense + 7, 4);     /* a sparse key first */
  free(sparse);
  free(keys);
}

/* Dense runs that end at INT64_MIN and INT64_MAX: the window must stop at
** the ends of the key range. */
static void test_random_keys_at_the_ends_of_int64_match_model(void **state) {
  (void)state;
  const size_t n = 4000;
  int64_t *keys = malloc(n * sizeof *keys);
  assert_non_null(keys);
  for (size_t i = 0; i < n / 2; i++) {
    keys[i] = INT64_MIN + (int64_t)i;
    keys[n / 2 + i] = INT64_MAX - (int64_t)i;
  }
  run_random_model(keys, n, 0, 5);          /* INT64_MIN first */
  run_random_model(keys, n, n / 2, 6);      /* INT64_MAX first */
  run_random_model(keys, n, n / 2 - 1, 7);  /* INT64_MIN + 1999 first */
  run_random_model(keys, n, n - 1, 8);      /* INT64_MAX - 1999 first */
  free(keys);
}

/* A key put while far outside the window (so in the hash table), then
** covered by the window as dense keys accumulate: get, overwrite, remove and
** put again must all still find it, and it is counted once. */
static void test_key_hashed_before_window_grew_over_it_stays_reachable(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  const int64_t far = 5000;
  assert_int_equal(dyng_idmap_put(m, 0, 0), DYNG_OK);
  assert_int_equal(dyng_idmap_put(m, far, 77), DYNG_OK);
  for (int64_t k = 1; k < 8000; k++)
    if (k != far) assert_int_equal(dyng_idmap_put(m, k, (uint32_t)k), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), 8000);
  uint32_t v = 0;
  int inserted = -1;
  assert_int_equal(dyng_idmap_get(m, far, &v), DYNG_OK);
  assert_int_equal(v, 77);
  assert_int_equal(dyng_idmap_get_or_put(m, far, 1, &v, &inserted), DYNG_OK);
  assert_int_equal(inserted, 0);
  assert_int_equal(v, 77);
  assert_int_equal(dyng_idmap_put(m, far, 78), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), 8000);
  assert_int_equal(dyng_idmap_get(m, far, &v), DYNG_OK);
  assert_int_equal(v, 78);
  assert_int_equal(dyng_idmap_remove(m, far), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), 7999);
  assert_int_equal(dyng_idmap_get(m, far, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_remove(m, far), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_put(m, far, 79), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), 8000);
  assert_int_equal(dyng_idmap_get(m, far, &v), DYNG_OK);
  assert_int_equal(v, 79);
  for (int64_t k = 0; k < 8000; k++) {
    assert_int_equal(dyng_idmap_get(m, k, &v), DYNG_OK);
    assert_int_equal(v, k == far ? 79u : (uint32_t)k);
  }
  assert_int_equal(dyng_idmap_get(m, -1, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_get(m, 8000, &v), DYNG_ENOTFOUND);
  dyng_idmap_free(m);
}

/* Keys counting down from 0 and up from 0 alternately. */
static void test_window_grows_in_both_directions(void **state) {
  (void)state;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  for (int64_t k = 0; k <= 5000; k++) {
    assert_int_equal(dyng_idmap_put(m, -k, (uint32_t)(2 * k)), DYNG_OK);
    if (k) assert_int_equal(dyng_idmap_put(m, k, (uint32_t)(2 * k + 1)), DYNG_OK);
  }
  assert_int_equal(dyng_idmap_size(m), 10001);
  for (int64_t k = 0; k <= 5000; k++) {
    uint32_t v;
    assert_int_equal(dyng_idmap_get(m, -k, &v), DYNG_OK);
    assert_int_equal(v, (uint32_t)(2 * k));
    if (!k) continue;
    assert_int_equal(dyng_idmap_get(m, k, &v), DYNG_OK);
    assert_int_equal(v, (uint32_t)(2 * k + 1));
  }
  uint32_t v;
  assert_int_equal(dyng_idmap_get(m, -5001, &v), DYNG_ENOTFOUND);
  assert_int_equal(dyng_idmap_get(m, 5001, &v), DYNG_ENOTFOUND);
  dyng_idmap_free(m);
}

static void test_clear_removes_every_key_and_keeps_memory(void **state) {
  (void)state;
  const size_t n = 4000;
  /* Half sparse keys (hash table), half a dense run (window). */
  int64_t *keys = key_pool(n);
  for (size_t i = n / 2; i < n; i++) keys[i] = 100000 + (int64_t)i;
  dyng_idmap *m = dyng_idmap_new(0);
  assert_non_null(m);
  assert_int_equal(dyng_idmap_put(m, keys[n - 1], 0), DYNG_OK);
  for (size_t i = 0; i < n; i++) assert_int_equal(dyng_idmap_put(m, keys[i], (uint32_t)i), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), n);
  size_t bytes = dyng_idmap_bytes(m);
  dyng_idmap_clear(m);
  assert_int_equal(dyng_idmap_size(m), 0);
  assert_int_equal(dyng_idmap_bytes(m), bytes);
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    assert_int_equal(dyng_idmap_get(m, keys[i], &v), DYNG_ENOTFOUND);
    assert_int_equal(dyng_idmap_remove(m, keys[i]), DYNG_ENOTFOUND);
  }
  /* Still usable after clearing. */
  for (size_t i = 0; i < n; i += 2) assert_int_equal(dyng_idmap_put(m, keys[i], (uint32_t)(i + 1)), DYNG_OK);
  assert_int_equal(dyng_idmap_size(m), n / 2);
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    int rc = dyng_idmap_get(m, keys[i], &v);
    if (i % 2) {
      assert_int_equal(rc, DYNG_ENOTFOUND);
    } else {
      assert_int_equal(rc, DYNG_OK);
      assert_int_equal(v, (uint32_t)(i + 1));
    }
  }
  dyng_idmap_free(m);
  free(keys);
}

static void test_size_hint_does_not_limit_the_map(void **state) {
  (void)state;
  const size_t n = 5000;
  int64_t *keys = key_pool(n);
  /* A large hint for few keys, a tiny hint for many. */
  dyng_idmap *big = dyng_idmap_new(100000);
  dyng_idmap *small = dyng_idmap_new(1);
  assert_non_null(big);
  assert_non_null(small);
  assert_true(dyng_idmap_bytes(big) > dyng_idmap_bytes(small));
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(dyng_idmap_put(big, keys[i], (uint32_t)i), DYNG_OK);
    assert_int_equal(dyng_idmap_put(small, keys[i], (uint32_t)i), DYNG_OK);
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t a, b;
    assert_int_equal(dyng_idmap_get(big, keys[i], &a), DYNG_OK);
    assert_int_equal(dyng_idmap_get(small, keys[i], &b), DYNG_OK);
    assert_int_equal(a, i);
    assert_int_equal(b, i);
  }
  assert_int_equal(dyng_idmap_size(big), n);
  assert_int_equal(dyng_idmap_size(small), n);
  dyng_idmap_free(big);
  dyng_idmap_free(small);
  free(keys);
}

int main(void) {
  test_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_new_map_is_empty),
      cmocka_unit_test(test_free_accepts_null),
      cmocka_unit_test(test_put_then_get_returns_value),
      cmocka_unit_test(test_put_of_existing_key_overwrites_value),
      cmocka_unit_test(test_get_or_put_inserts_only_new_keys),
      cmocka_unit_test(test_remove_deletes_only_that_key),
      cmocka_unit_test(test_extreme_keys_and_values_are_ordinary),
      cmocka_unit_test(test_growth_through_many_rehashes_keeps_every_key),
      cmocka_unit_test(test_removal_keeps_clustered_keys_findable),
      cmocka_unit_test(test_random_sparse_keys_match_model),
      cmocka_unit_test(test_random_dense_and_sparse_keys_match_model),
      cmocka_unit_test(test_random_keys_at_the_ends_of_int64_match_model),
      cmocka_unit_test(test_key_hashed_before_window_grew_over_it_stays_reachable),
      cmocka_unit_test(test_window_grows_in_both_directions),
      cmocka_unit_test(test_clear_removes_every_key_and_keeps_memory),
      cmocka_unit_test(test_size_hint_does_not_limit_the_map),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
