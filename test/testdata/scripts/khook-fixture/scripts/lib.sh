# Helpers sourced by install.sh.
log() { echo "==> $*"; }

install_chart() {
  local name="$1" chart="$2" ns="$3"
  shift 3
  helm upgrade --install "$name" "$chart" --namespace "$ns" --create-namespace "$@"
}
