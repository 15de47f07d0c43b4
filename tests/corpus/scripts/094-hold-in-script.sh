#!/bin/bash
#PBS -h
#PBS -N held_in_script
#PBS -l walltime=1:00:00
echo held
