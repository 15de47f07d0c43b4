#!/bin/bash
PBS -l walltime=00:04:00,nodes=4:ppn=2,mem=1GB
export PATH=/opt/torque/bin:$PATH
