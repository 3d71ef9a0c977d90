/*
** cuda/fatbinary-nvfatbin.c: the `fatbinary` of a CUDA root assembled from
** PyPI's wheels (cuda/toolkit-from-wheels.sh), which ship no fatbinary of
** their own.  clang, compiling CUDA against such a root, runs
** <root>/bin/fatbinary to pack each file's device code (a cubin per arch,
** PTX for the highest) into the fat binary it embeds in the host object.
** This program does that with NVIDIA's nvFatbin library
** (nvidia-nvfatbin-cu12), which writes the same container as the toolkit's
** own tool.
**
** The command lines it takes are the ones clang's CUDA driver writes:
**
**   clang >= 17:  -64 --create OUT --image3=kind=elf,sm=75,file=A.cubin
**                                  --image3=kind=ptx,sm=120,file=A.s
**   clang <= 16:  -64 --create OUT --image=profile=sm_75,file=A.cubin
**                                  --image=profile=compute_120,file=A.s
**
** and -32, --cuda and -g.  Any other argument is an error: a clang that asks
** for something new stops the build instead of getting a different fat
** binary.
**
** How it works: the container gets nvFatbin's options -64 (or -32) and
** -host=linux, the entry flags the toolkit's fatbinary writes on Linux
** (plus -cuda and -g when asked for).  Each image is read whole and added
** under a name made from its file's base name, without the extension and
** without the six random characters clang puts in temporary file names, so
** that two builds of one source give the same bytes.  The result is written
** to OUT; on any error nothing is left at OUT and the exit status is 1
** (2 for a command line it does not understand).
*/
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvFatbin.h>

/* One image to pack: a cubin (SASS) or PTX text for one arch. */
typedef struct dyng_image {
  int is_ptx;      /* 1: PTX text; 0: a cubin */
  char *arch;      /* the compute capability, digits and an optional suffix: "90", "90a" */
  char *path;      /* the file clang wrote */
} dyng_image;

static void dyng_complain(const char *what, const char *detail) {
  fprintf(stderr, "fatbinary (nvFatbin): %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

/* The value of KEY in a "key=value,key=value" list, newly allocated (the
** caller frees it), or NULL when KEY is absent.  "file" is always clang's
** last key and takes the rest of the text, since a path may hold commas. */
static char *dyng_field(const char *spec, const char *key) {
  size_t key_len = strlen(key);
  for (const char *p = spec; p && *p;) {
    if (strncmp(p, key, key_len) == 0 && p[key_len] == '=') {
      const char *value = p + key_len + 1;
      size_t len = strcmp(key, "file") == 0 ? strlen(value) : strcspn(value, ",");
      char *copy = malloc(len + 1);
      if (copy) {
        memcpy(copy, value, len);
        copy[len] = 0;
      }
      return copy;
    }
    p = strchr(p, ',');
    if (p) p++;
  }
  return NULL;
}

/* Whether ARCH is a compute capability as nvFatbin takes it: digits, then at
** most one letter ("90a", "100f"). */
static int dyng_arch_ok(const char *arch) {
  size_t digits = strspn(arch, "0123456789");
  if (digits < 2) return 0;
  return arch[digits] == 0 || (arch[digits] >= 'a' && arch[digits] <= 'z' && arch[digits + 1] == 0);
}

/* Fills IMG from one --image3= or --image= argument (SPEC without the
** option's name).  Returns 0, or -1 when the argument is not understood
** (IMG's strings are then freed by the caller as usual). */
static int dyng_parse_image(const char *spec, int image3, dyng_image *img) {
  img->path = dyng_field(spec, "file");
  if (image3) {
    char *kind = dyng_field(spec, "kind");
    img->arch = dyng_field(spec, "sm");
    int ok = kind && (strcmp(kind, "elf") == 0 || strcmp(kind, "ptx") == 0);
    if (ok) img->is_ptx = strcmp(kind, "ptx") == 0;
    free(kind);
    if (!ok) return -1;
  } else {
    char *profile = dyng_field(spec, "profile");
    const char *arch = NULL;
    if (profile && strncmp(profile, "sm_", 3) == 0) {
      img->is_ptx = 0;
      arch = profile + 3;
    } else if (profile && strncmp(profile, "compute_", 8) == 0) {
      img->is_ptx = 1;
      arch = profile + 8;
    }
    img->arch = arch ? strdup(arch) : NULL;
    free(profile);
  }
  if (!img->path || !*img->path || !img->arch || !dyng_arch_ok(img->arch)) return -1;
  return 0;
}

/* The whole file at PATH, newly allocated with a NUL after its last byte
** (PTX is text and nvFatbin wants it terminated); its size, without the
** NUL, in *SIZE.  NULL on failure, with the reason on stderr. */
static char *dyng_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    dyng_complain(path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap) break;
    char *grown = realloc(buf, cap * 2 + 1);
    if (!grown) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = grown;
    cap *= 2;
  }
  if (!buf || ferror(f)) {
    dyng_complain(path, buf ? "read error" : "out of memory");
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[len] = 0;
  *size = len;
  return buf;
}

/* The image's name inside the fat binary (what cuobjdump lists), newly
** allocated: PATH's base name without its extension and without a "-XXXXXX"
** of six hexadecimal digits before it, the random part of clang's temporary
** files. */
static char *dyng_image_name(const char *path) {
  const char *base = strrchr(path, '/');
  char *name = strdup(base ? base + 1 : path);
  if (!name) return NULL;
  char *dot = strrchr(name, '.');
  if (dot && dot != name) *dot = 0;
  char *dash = strrchr(name, '-');
  if (dash && strlen(dash + 1) == 6 && strspn(dash + 1, "0123456789abcdef") == 6) *dash = 0;
  return name;
}

/* Adds IMG to H.  Returns 0, or 1 with the reason on stderr. */
static int dyng_add_image(nvFatbinHandle h, const dyng_image *img) {
  size_t size = 0;
  char *code = dyng_read_file(img->path, &size);
  char *name = code ? dyng_image_name(img->path) : NULL;
  nvFatbinResult rc = NVFATBIN_ERROR_NULL_POINTER;
  if (name) {
    rc = img->is_ptx ? nvFatbinAddPTX(h, code, size + 1, img->arch, name, "")
                     : nvFatbinAddCubin(h, code, size, img->arch, name);
    if (rc != NVFATBIN_SUCCESS) dyng_complain(img->path, nvFatbinGetErrorString(rc));
  } else if (code) {
    dyng_complain(img->path, "out of memory");
  }
  free(name);
  free(code);
  return rc == NVFATBIN_SUCCESS ? 0 : 1;
}

/* Packs the images into OUT with the container options OPTS. */
static int dyng_pack(const char *out, const char **opts, size_t n_opts, const dyng_image *images,
                     int n_images) {
  nvFatbinHandle h = NULL;
  nvFatbinResult rc = nvFatbinCreate(&h, opts, n_opts);
  if (rc != NVFATBIN_SUCCESS) {
    dyng_complain("nvFatbinCreate", nvFatbinGetErrorString(rc));
    return 1;
  }
  int failed = 0;
  for (int i = 0; i < n_images && !failed; i++) failed = dyng_add_image(h, &images[i]);
  size_t size = 0;
  void *bytes = NULL;
  if (!failed) {
    rc = nvFatbinSize(h, &size);
    bytes = rc == NVFATBIN_SUCCESS ? malloc(size ? size : 1) : NULL;
    if (bytes) rc = nvFatbinGet(h, bytes);
    if (rc != NVFATBIN_SUCCESS || !bytes) {
      dyng_complain("nvFatbinGet", rc != NVFATBIN_SUCCESS ? nvFatbinGetErrorString(rc) : "out of memory");
      failed = 1;
    }
  }
  if (!failed) {
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) {
      dyng_complain(out, strerror(errno));
      if (f) remove(out);
      failed = 1;
    }
  }
  free(bytes);
  nvFatbinDestroy(&h);
  return failed;
}

int main(int argc, char **argv) {
  dyng_image *images = calloc((size_t)argc, sizeof *images);
  const char *out = NULL, *bits = "-64";
  int n_images = 0, cuda = 0, debug = 0, usage = 0;
  if (!images) {
    dyng_complain("out of memory", NULL);
    return 1;
  }
  for (int i = 1; i < argc && !usage; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-64") == 0 || strcmp(a, "-32") == 0) {
      bits = a;
    } else if (strcmp(a, "--cuda") == 0) {
      cuda = 1;
    } else if (strcmp(a, "-g") == 0) {
      debug = 1;
    } else if (strcmp(a, "--create") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (strncmp(a, "--create=", 9) == 0) {
      out = a + 9;
    } else if (strncmp(a, "--image3=", 9) == 0 || strncmp(a, "--image=", 8) == 0) {
      int image3 = a[7] == '3';
      if (dyng_parse_image(a + (image3 ? 9 : 8), image3, &images[n_images++]) != 0) {
        dyng_complain("cannot read the image", a);
        usage = 1;
      }
    } else {
      dyng_complain("unknown argument", a);
      usage = 1;
    }
  }
  if (!usage && (!out || !*out)) {
    dyng_complain("no --create OUTPUT", NULL);
    usage = 1;
  }
  if (!usage && n_images == 0) {
    dyng_complain("no --image3= or --image= given", NULL);
    usage = 1;
  }

  int rc = 2;
  if (!usage) {
    /* The toolkit's fatbinary on Linux: 64-bit (or 32) and host "linux". */
    const char *opts[4];
    size_t n_opts = 0;
    opts[n_opts++] = bits;
    opts[n_opts++] = "-host=linux";
    if (cuda) opts[n_opts++] = "-cuda";
    if (debug) opts[n_opts++] = "-g";
    rc = dyng_pack(out, opts, n_opts, images, n_images);
  }
  for (int i = 0; i < n_images; i++) {
    free(images[i].arch);
    free(images[i].path);
  }
  free(images);
  return rc;
}
