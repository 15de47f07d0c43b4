#!/bin/bash
#PBS -l nodes=2:ppn=2,\
walltime=01:00:00
#PBS -N cont
echo x
