#!/bin/csh -f
#PBS -N test-aqf
#PBS -q forecast
#PBS -l nodes=1
#PBS -l walltime=12:00:00
#PBS -k oe
#PBS -j oe
#PBS -m abe
#PBS -M a@herts.ac.uk,b@herts.ac.uk
cd $PBS_O_WORKDIR
