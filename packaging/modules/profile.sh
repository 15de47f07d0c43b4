# /etc/profile.d/minipbs-modules.sh (package minipbs-modules): the `module` command in login
# shells, and so in PBS jobs (pbs_mom starts job shells as login shells). MODULEPATH, when a
# shell brings none: the sample modulefiles; add a site's directories here (`:`-separated).
if [ -x /usr/bin/modulecmd ]; then
    MODULESHOME=/usr/share/minipbs/modules; export MODULESHOME
    if [ -z "${MODULEPATH:-}" ] && [ -z "${LOADEDMODULES:-}" ]; then
        MODULEPATH=/usr/share/minipbs/modulefiles; export MODULEPATH
    fi
    if [ -n "${BASH_VERSION:-}" ]; then eval "$(/usr/bin/modulecmd bash autoinit)"
    elif [ -n "${ZSH_VERSION:-}" ]; then eval "$(/usr/bin/modulecmd zsh autoinit)"
    else eval "$(/usr/bin/modulecmd sh autoinit)"; fi
fi
