#!/bin/csh

### Project name
#PBS -A UMSB0001

### Job name
#PBS -N metgrid_run 

### Wallclock time
#PBS -l walltime=04:00:00

#PBS -q regular
#PBS -j oe                    
#PBS -l select=2:ncpus=36:mpiprocs=36  

mpiexec_mpt ./metgrid.exe
