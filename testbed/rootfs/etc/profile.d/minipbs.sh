# The minipbs commands and the module command (our modulecmd, our sample modulefiles) in every
# login shell of the testbed, and so in every job (pbs_mom starts jobs as login shells).
if [ -x /usr/local/bin/modulecmd ]; then
    MODULESHOME=/usr/local; export MODULESHOME
    if [ -z "${MODULEPATH:-}" ]; then MODULEPATH=/usr/local/modulefiles; export MODULEPATH; fi
    if [ -n "${BASH_VERSION:-}" ]; then eval "$(/usr/local/bin/modulecmd bash autoinit)"
    else eval "$(/usr/local/bin/modulecmd sh autoinit)"; fi
fi
