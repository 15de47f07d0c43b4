#!/bin/bash
#PBS -j oe
#PBS -o /dev/null
#PBS -M someone@example.com
#PBS -m ae
#PBS -l size=12,walltime=00:02:00
date
