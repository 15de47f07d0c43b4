#!/bin/sh
#PBS -M someone@temple.edu
#PBS -l walltime=48:00:00
#PBS -l nodes=4:ppn=28
#PBS -N harmonia_nomig
#PBS -q normal
#PBS
cd $PBS_O_WORKDIR
torque-launch cmds.txt
