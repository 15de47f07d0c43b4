#!/bin/sh
#PBS -N dep_unknown
#PBS -W depend=afterok:11111
cd $PBS_O_WORKDIR
