# /etc/profile.d/minipbs-modules.sh: login shells (and so PBS job shells, which pbs_mom
# starts as login shells) get the `module` function when modulecmd is installed.
if command -v modulecmd >/dev/null 2>&1; then
    if [ -n "${BASH_VERSION:-}" ]; then
        eval "$(modulecmd bash autoinit)"
    elif [ -n "${ZSH_VERSION:-}" ]; then
        eval "$(modulecmd zsh autoinit)"
    else
        eval "$(modulecmd sh autoinit)"
    fi
fi
