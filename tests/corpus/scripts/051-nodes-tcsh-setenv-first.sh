#!/bin/tcsh
#setenv MALLOC_CHECK_ 0


#PBS -S /bin/tcsh
### Inherit all current environment variables
#PBS -V
#PBS -N tcsh_job
#PBS -k eo
#PBS -M someone@caltech.edu
#PBS -l nodes=1:ppn=30
#PBS -l walltime=10000:00:00
source /programs/labcshrc
