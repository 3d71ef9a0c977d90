#!/bin/sh
# .ci/node-debian.sh: Debian's Node.js 18 with Debian's node-sqlite3, for
# examples/node, where apt cannot install them: a NodeSource Node.js holds
# the `nodejs` package, and Debian's node-sqlite3 is built against Debian's
# libnode108, which conflicts with it.  The packages are downloaded and
# unpacked into a private folder (nothing of the system's Node.js changes),
# with a `node` wrapper there that runs Debian's node with its libraries
# and modules.  Debian's libnode loads three of its built-in modules from
# /usr/share/nodejs, whose packages install beside any Node.js: those are
# installed for real.
#
#   sh .ci/node-debian.sh [DIR]   (default: ~/.cache/dyng/node-debian)
#
# Run as root or as a user with sudo; idempotent.
set -eu
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/dyng/node-debian}
[ -x "$dir/node" ] && exit 0
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  node-acorn node-cjs-module-lexer node-undici >/dev/null
# Debian's Node.js is the one libnode108 comes in.
version=$(apt-cache show libnode108 | sed -n 's/^Version: //p' | head -1)
[ -n "$version" ] || { echo "node-debian.sh: no libnode108 in the package lists" >&2; exit 1; }
# node-sqlite3 finds its binding through node-pre-gyp, and that needs its
# own modules.
js=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
       --no-replaces --no-enhances --no-pre-depends node-pre-gyp | grep -E '^(node|libjs)-' | sort -u)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -q "nodejs=$version" "libnode108=$version" node-sqlite3 $js >/dev/null 2>&1) ||
  { echo "node-debian.sh: apt-get download failed" >&2; exit 1; }
rm -rf "$dir.new" && mkdir -p "$dir.new"
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$dir.new"; done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
cat > "$dir.new/node" <<WRAPPER
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH="\$here/usr/lib/$arch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" \\
NODE_PATH="\$here/usr/share/nodejs:\$here/usr/lib/$arch/nodejs\${NODE_PATH:+:\$NODE_PATH}" \\
  exec "\$here/usr/bin/node" "\$@"
WRAPPER
chmod +x "$dir.new/node"
"$dir.new/node" -e 'require("sqlite3")' || { echo "node-debian.sh: the unpacked node cannot load sqlite3" >&2; exit 1; }
rm -rf "$dir" && mv "$dir.new" "$dir"
echo "node-debian.sh: Debian's node $version with node-sqlite3 in $dir"
