#!/bin/sh

#PBS -S /bin/sh
#PBS -N baySeq
#PBS -A lab_flux
#PBS -l qos=flux
#PBS -q flux
#PBS -l nodes=1:ppn=12,pmem=4000mb,walltime=72:00:00
#PBS -m abe
#PBS -j oe
#PBS -V
#PBS -M $USER@umich.edu

####  End PBS preamble
cd $PBS_O_WORKDIR
